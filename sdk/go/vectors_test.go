package assent

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/assent-hq/assent/sdk/go/decisiontoken"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// TestVectors holds VerifyWebhook and VerifyDecisionToken to the shared
// vectors (sdk/testdata/vectors.json) the other SDKs pass too, reason
// included.
func TestVectors(t *testing.T) {
	raw, err := os.ReadFile("../testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Webhooks []struct {
			Name      string
			Headers   map[string]string
			Body      string
			Secret    string
			Now       int64
			Tolerance int64
			Valid     bool
			Error     string
			Event     string
		}
		DecisionTokens struct {
			JWKS         json.RawMessage `json:"jwks"`
			Issuer       string
			Organization string
			Leeway       int64
			Cases        []struct {
				Name         string
				Issuer       string // when the verifier expects another
				Organization string // when the verifier expects another
				Token        string
				Input        string
				Action       string
				Now          int64
				Valid        bool
				Error        string
			}
		} `json:"decisionTokens"`
	}
	var canon struct {
		CanonicalJSON []struct{ Name, Input, SHA256 string } `json:"canonicalJson"`
	}
	if err := json.Unmarshal(raw, &canon); err != nil {
		t.Fatal(err)
	}
	for _, c := range canon.CanonicalJSON {
		if got, err := decisiontoken.InputSHA256([]byte(c.Input)); err != nil || got != c.SHA256 {
			t.Errorf("canonical %s: %s %v", c.Name, got, err)
		}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	webhookReasons := map[error]string{ErrMissingSignature: "missing_header", webhook.ErrMalformedHeader: "malformed_header",
		webhook.ErrTimestampOutOfTolerance: "timestamp_out_of_tolerance", webhook.ErrNoMatchingSignature: "no_matching_signature"}
	for _, c := range v.Webhooks {
		h := http.Header{}
		for k, val := range c.Headers {
			h.Set(k, val)
		}
		ev, err := verifyWebhookAt([]byte(c.Body), h, c.Secret, time.Duration(c.Tolerance)*time.Second, time.Unix(c.Now, 0))
		if c.Valid {
			if err != nil || ev.Event != c.Event {
				t.Errorf("%s: %v %v", c.Name, ev, err)
			}
			continue
		}
		if reason := reasonOf(err, webhookReasons); reason != c.Error {
			t.Errorf("%s: want %s, got %s (%v)", c.Name, c.Error, reason, err)
		}
	}
	tokenReasons := map[error]string{decisiontoken.ErrMalformed: "malformed", decisiontoken.ErrAlgorithm: "algorithm",
		decisiontoken.ErrUnknownKey: "unknown_key", decisiontoken.ErrSignature: "signature", decisiontoken.ErrIssuer: "issuer",
		decisiontoken.ErrOrganization: "organization", decisiontoken.ErrExpired: "expired",
		decisiontoken.ErrNotYetValid: "not_yet_valid", decisiontoken.ErrInput: "input", decisiontoken.ErrAction: "action"}
	d := v.DecisionTokens
	if len(d.Cases) == 0 || len(v.Webhooks) == 0 {
		t.Fatal("no vectors read")
	}
	for _, c := range d.Cases {
		now := time.Unix(c.Now, 0)
		issuer, org := d.Issuer, d.Organization
		if c.Issuer != "" {
			issuer = c.Issuer
		}
		if c.Organization != "" {
			org = c.Organization
		}
		_, err := verifyDecisionTokenAt(c.Token, json.RawMessage(c.Input), d.JWKS, issuer, org, c.Action,
			func() time.Time { return now }, time.Duration(d.Leeway)*time.Second)
		if c.Valid {
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
			}
			continue
		}
		if reason := reasonOf(err, tokenReasons); reason != c.Error {
			t.Errorf("%s: want %s, got %s (%v)", c.Name, c.Error, reason, err)
		}
	}
}

func reasonOf(err error, reasons map[error]string) string {
	for sentinel, reason := range reasons {
		if errors.Is(err, sentinel) {
			return reason
		}
	}
	if err == nil {
		return "valid"
	}
	return "unexpected"
}
