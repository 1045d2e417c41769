package approvals

import (
	"slices"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/models"
)

// ChatSettle says whether a may be settled from a chat message's buttons,
// which approve as proposed, and why not when it may
// not: the rule the messages were drawn with, checked again at the click.
func ChatSettle(a *Approval) (ok bool, why string) {
	pending := slices.ContainsFunc(a.Questions.V, func(q models.Question) bool { return q.Answer == nil })
	return events.ChatSettle(a.Risk, len(a.Concerns.V), pending)
}
