package models

import (
	"encoding/json"
	"time"
)

// Approval risks.
const (
	RiskLow      = "low"
	RiskMedium   = "medium"
	RiskHigh     = "high"
	RiskCritical = "critical"
)

// Factor is one line of an approval's checklist.
type Factor struct {
	Label  string `json:"label"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Link is a labelled address shown with a request.
type Link struct {
	Label string `json:"label"`
	URL   string `json:"url"`
}

// Question is an approver's question and the requester's answer.
type Question struct {
	QuestionID string     `json:"questionId"`
	Question   string     `json:"question"`
	AskedBy    string     `json:"askedBy"`
	AskedAt    time.Time  `json:"askedAt"`
	Answer     *string    `json:"answer"`
	AnsweredAt *time.Time `json:"answeredAt"`
}

// Change is one correction an approver applied; From and To are JSON
// values as sent, so numbers keep their exact text.
type Change struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// FromText is the value before, as a person reads it.
func (c Change) FromText() string { return plainJSON(c.From) }

// ToText is the value after, as a person reads it.
func (c Change) ToText() string { return plainJSON(c.To) }

// plainJSON shows a JSON value as a person reads it: a string without its
// quotes, anything else as JSON.
func plainJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Concern is what an ethics rule raised about a request.
type Concern struct {
	Principle string `json:"principle"`
	Rule      string `json:"rule"`
	Concern   string `json:"concern"`
}

// FromScreen says whether the organisation's model screen raised c, not
// an ethics rule.
func (c Concern) FromScreen() bool { return c.Rule == ScreenRule }
