// Package decisions holds the rules of decision tokens: how long one holds
// (the approval's or the action's own lifetime, else its organisation's,
// else an hour) and which claims an approved approval's token and an
// allowed gate check's token carry. The gate, the approval's persist
// activity and the organisation's read take them from here; the store only
// keeps and uses the signing keys (models.SigningKeyStore.SignDecision).
package decisions

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// Lifetime is own seconds when set (an approval's or an action's), else
// org's (Organization.DecisionTokenLifetime).
func Lifetime(own *int, org *models.Organization) time.Duration {
	if own != nil && *own > 0 {
		return time.Duration(*own) * time.Second
	}
	return org.DecisionTokenLifetime()
}

// Approved is what an approved approval's token claims of it.
type Approved struct {
	ID, OrganizationID string
	// Input is the input approved; Deciders who approved it.
	Input    []byte
	Deciders []string
	// DecidedAt is when it was decided; TTLSeconds its own token lifetime,
	// if set; Action the gate's action that raised it, if one did.
	DecidedAt  time.Time
	TTLSeconds *int
	Action     *string
}

// ForApproval are the claims of approved approval a's decision token,
// issued by the instance at issuer (its public base URL): its approved
// input's hash, who approved it, and its decision time, the token holding
// for its lifetime after it.
func ForApproval(a Approved, org *models.Organization, issuer string) (decisiontoken.Claims, error) {
	sum, err := decisiontoken.InputSHA256(a.Input)
	if err != nil {
		return decisiontoken.Claims{}, err
	}
	deciders := slices.Clone(a.Deciders)
	if deciders == nil {
		deciders = []string{}
	}
	c := decisiontoken.Claims{Issuer: issuer, Subject: a.ID, Organization: a.OrganizationID, InputSHA256: sum,
		Deciders: deciders, IssuedAt: a.DecidedAt, Expiry: a.DecidedAt.Add(Lifetime(a.TTLSeconds, org)), ID: newID()}
	if a.Action != nil {
		c.Action = *a.Action
	}
	return c, nil
}

// ForGateCheck are the claims of the decision token of check c, an allow
// by the policy of action (no deciders) or by a standing mandate (its
// granter the decider, the mandate named), holding for the action's
// lifetime after the check.
func ForGateCheck(c *models.GateCheck, action *models.Action, org *models.Organization, issuer string) (decisiontoken.Claims, error) {
	sum, err := decisiontoken.InputSHA256(c.Input)
	if err != nil {
		return decisiontoken.Claims{}, err
	}
	claims := decisiontoken.Claims{Issuer: issuer, Subject: c.ID, Organization: c.OrganizationID, Action: c.Action,
		InputSHA256: sum, Deciders: []string{}, IssuedAt: c.CreatedAt,
		Expiry: c.CreatedAt.Add(Lifetime(action.DecisionTokenTTLSeconds, org)), ID: newID()}
	if c.Mandate != nil {
		claims.Mandate, claims.Deciders = c.Mandate.ID, []string{c.Mandate.GranterID}
	}
	return claims, nil
}

// newID is a token's jti: unique, so one token takes one execution
// receipt.
func newID() string { return ids.New(ids.TokenID) }

// OneMeaning refuses, as 400 invalid_request naming the place (field
// "input.Amount"), an input that a token, a budget, a rule or a schema
// binds but an executor may read otherwise (decisiontoken.CheckMeaning:
// keys equal without regard to case in one object, numbers beyond
// ±2^53). Every input Assent binds passes here: approvals' (and their
// corrections), the gate's checks' and receipts'; metadata and other
// free-form fields do not.
func OneMeaning(field string, input []byte) error {
	return named(field, decisiontoken.CheckMeaning(input))
}

// DistinctKeys is OneMeaning's rule on keys alone, for documents kept as
// written that no token binds but an agent or a page decodes: a
// collection's answers, a report's dataset.
func DistinctKeys(field string, doc []byte) error {
	return named(field, decisiontoken.CheckKeys(doc))
}

// OneMeaningFields is OneMeaning for an object held as its fields (a
// decision's corrections).
func OneMeaningFields(field string, fields map[string]json.RawMessage) error {
	if len(fields) == 0 {
		return nil
	}
	doc, err := json.Marshal(fields)
	if err != nil {
		return apperr.Field(apperr.InvalidRequest, field, "%s is not JSON", field)
	}
	return OneMeaning(field, doc)
}

// named is the API's refusal of an ambiguity found in field.
func named(field string, err error) error {
	var ambiguous *decisiontoken.AmbiguityError
	if !errors.As(err, &ambiguous) {
		return err
	}
	at := field
	switch {
	case ambiguous.Path == "":
	case field == "" || strings.HasPrefix(ambiguous.Path, "["):
		at = field + ambiguous.Path
	default:
		at = field + "." + ambiguous.Path
	}
	if at == "" {
		at = "body"
	}
	return apperr.Field(apperr.InvalidRequest, at, "%s %s", at, ambiguous.Problem)
}
