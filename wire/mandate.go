package wire

import (
	"strings"

	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Mandate is a standing mandate as /api/v1/mandates shows it, and the data
// of mandate.granted, mandate.revoked and mandate.exhausted.
type Mandate struct {
	ID         string           `json:"id"`
	Action     string           `json:"action"`
	Condition  *string          `json:"condition"`
	Agents     []string         `json:"agents"`
	Budget     MandateBudget    `json:"budget"`
	StartsAt   wiretime.Time    `json:"startsAt"`
	ExpiresAt  wiretime.Time    `json:"expiresAt"`
	Note       string           `json:"note"`
	GrantedBy  ActorRef         `json:"grantedBy"`
	ApprovalID *string          `json:"approvalId"`
	Status     string           `json:"status"`
	Uses       int              `json:"uses"`
	Remaining  MandateRemaining `json:"remaining"`
	RevokedAt  *wiretime.Time   `json:"revokedAt"`
	RevokedBy  *ActorRef        `json:"revokedBy"`
	URL        string           `json:"url"`
	CreatedAt  wiretime.Time    `json:"createdAt"`
}

// ActorRef names who did something: a member, or a key.
type ActorRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// MandateBudget bounds a mandate's uses per window: a count, a sum of a
// numeric input field, or both.
type MandateBudget struct {
	Count  *int        `json:"count"`
	Sum    *MandateSum `json:"sum"`
	Window string      `json:"window"`
}

// MandateSum is a budget on the sum of one numeric field of the input.
type MandateSum struct {
	Field string  `json:"field"`
	Max   float64 `json:"max"`
}

// MandateRemaining is the budget left in the window that holds now: nil
// where the mandate sets no such bound.
type MandateRemaining struct {
	Count *int     `json:"count"`
	Sum   *float64 `json:"sum"`
}

// NewMandate serializes m; baseURL makes its page's address absolute.
func NewMandate(m *models.Mandate, baseURL string) Mandate {
	out := Mandate{ID: m.ID, Action: m.Action, Condition: Optional(m.Condition), Agents: NonNil(m.Agents),
		Budget:   MandateBudget{Count: m.BudgetCount, Window: m.BudgetWindow},
		StartsAt: wiretime.New(m.StartsAt), ExpiresAt: wiretime.New(m.ExpiresAt), Note: m.Note,
		GrantedBy: ActorRef{ID: m.GranterID, Name: m.GranterName}, ApprovalID: m.ApprovalID, Status: m.Status(),
		Uses: m.Usage.Uses, URL: strings.TrimRight(baseURL, "/") + paths.Mandate(m.ID), CreatedAt: wiretime.New(m.CreatedAt)}
	if m.BudgetSum != nil && m.BudgetSumField != nil {
		out.Budget.Sum = &MandateSum{Field: *m.BudgetSumField, Max: *m.BudgetSum}
	}
	out.Remaining.Count, out.Remaining.Sum = m.Remaining(m.Usage)
	if m.RevokedAt != nil {
		at := wiretime.New(*m.RevokedAt)
		out.RevokedAt = &at
		out.RevokedBy = &ActorRef{ID: deref(m.RevokedByID), Name: deref(m.RevokedBy)}
	}
	return out
}
