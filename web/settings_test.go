package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestSettingsPageSetsAndEndsADelegation: a member delegates and ends it
// on the settings page; a refusal is said in a person's words with what
// was typed kept, everything a person typed is escaped, and the delegate
// sees whom they stand in for.
func TestSettingsPageSetsAndEndsADelegation(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob <b>", "")
		require.NoError(t, err)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		p := b.get("/settings")
		require.Equal(t, http.StatusOK, p.status, p.body)
		assert.Contains(t, p.body, "Delegation while away")
		assert.Contains(t, p.body, `<a href="/settings">Settings</a>`, "the layout links it")

		r := b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"ada@example.com"}, "until": {"2099-01-01T00:00"},
			"note": {"<script>alert(1)</script>"}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Equal(t, "Who stands in for you must name someone other than you.", problemOf(t, r))
		assert.Contains(t, r.body, `value="ada@example.com" aria-invalid="true" aria-describedby="problem"`, "what was typed is kept, marked")
		assert.Contains(t, r.body, "&lt;script&gt;alert(1)&lt;/script&gt;")
		assert.NotContains(t, r.body, "<script>alert(1)")
		r = b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "until": {"soon"}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Equal(t, "Until must be a date and time in UTC, such as 2026-01-02T15:04.", problemOf(t, r))

		// Bob is away to Ada until 2098: Ada to Bob would lead back to her.
		_, err = s.services.Delegations.Set(ctx, (&models.Person{Organization: s.org, Member: bob}).Actor(),
			delegations.SetInput{To: "ada@example.com", Until: "2098-01-01T00:00:00Z"})
		require.NoError(t, err)
		r = b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "until": {"2099-01-01T00:00"}})
		assert.Equal(t, http.StatusConflict, r.status, r.body)
		assert.Equal(t, "Who stands in for you leads back to you at overlapping times (Ada Lovelace → Bob <b> → Ada Lovelace): one of those delegations must end first.",
			problemOf(t, r))
		// From when his ends, it does not.
		r = b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "from": {"2098-01-01T00:00"},
			"until": {"2099-01-01T00:00"}, "note": {"<i>holiday</i>"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/settings?done=delegation-set", r.header.Get("Location"))
		p = b.get("/settings?done=delegation-set")
		assert.Contains(t, p.body, "Your delegation is set.")
		assert.Contains(t, p.body, "Bob &lt;b&gt; &lt;bob@example.com&gt;")
		assert.Contains(t, p.body, "&lt;i&gt;holiday&lt;/i&gt;")
		assert.Contains(t, p.body, `value="2099-01-01T00:00"`)

		bb := s.browser(t)
		bb.signIn(s, "bob@example.com")
		standsIn := bb.get("/settings")
		assert.Contains(t, standsIn.body, "You stand in for")
		assert.Contains(t, standsIn.body, "Ada Lovelace")

		r = b.post("/settings/delegation/end", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		p = b.get("/settings?done=delegation-ended")
		assert.Contains(t, p.body, "Your delegation has ended")
		assert.NotContains(t, p.body, "End delegation now")
		assert.NotContains(t, bb.get("/settings").body, "You stand in for")
	})
}

// TestApprovalPageSaysOnWhoseBehalf: a delegate asked once Ada's
// delegation started sees on whose behalf they are asked, and the settled
// page names both.
func TestApprovalPageSaysOnWhoseBehalf(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		_, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		a := s.started(t, &models.Approval{Title: "Pay", ApproverIDs: []string{s.ada.ID}})
		ada := s.browser(t)
		csrf := ada.signIn(s, "ada@example.com")
		r := ada.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "until": {"2099-01-01T00:00"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)

		bob := s.browser(t)
		bob.signIn(s, "bob@example.com")
		page := bob.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "You are asked on behalf of Ada Lovelace, who is away")
		r = bob.post("/approvals/"+a.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "submission": {page.submission(t)}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, bob.get("/approvals/"+a.ID).body, "By Bob, on behalf of Ada Lovelace")
	})
}
