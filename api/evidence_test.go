package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestEvidenceExport: a flow's export holds its approval, review and
// report with their timeline and verifies offline; one changed byte of an
// entry is named by the check, a change elsewhere breaks the signature;
// the CSV is the timeline with a stable header and no formula; a key
// without every scope is told which it lacks, and a plain member is
// refused.
func TestEvidenceExport(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		_, evil, err := s.store.CreateKey(ctx, s.org.ID, "=HYPERLINK(\"http://evil.example\")", models.KeyAgent, scopes.All)
		require.NoError(t, err)
		f := s.do(t, "POST", "/api/v1/flows", evil, `{"title":"Quarter close"}`, nil)
		require.Equal(t, 201, f.status, string(f.body))
		flowID := f.decoded["id"].(string)
		s.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html("<p>Revenue rose.</p>"))+`,"audience":["Finance"],"flowId":"`+flowID+`"}`)
		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["Finance","cy@example.com"],"flowId":"`+flowID+`"}`)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/decision", s.cyToken, `{"decision":"reject","note":"no"}`, nil).status)
		r := s.do(t, "POST", "/api/v1/reviews", s.agentKey, `{"title":"Check","reportId":"q3","reviewers":["Finance"],"flowId":"`+flowID+`"}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/reviews/"+r.decoded["id"].(string)+"/verdict", s.cyToken, `{"verdict":"approved","note":"fine"}`, nil).status)

		got := s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence", s.agentKey, "", nil)
		require.Equal(t, 200, got.status, string(got.body))
		assert.Equal(t, map[string]any{"type": "flow", "id": flowID, "title": "Quarter close"}, got.decoded["subject"])
		var kinds []string
		for _, req := range got.decoded["requests"].([]any) {
			kinds = append(kinds, req.(map[string]any)["type"].(string))
		}
		assert.Equal(t, []string{"approval", "review", "report"}, kinds, "the requests kind after kind, then the reports")
		// Who was asked, and through which team or entry.
		finance := map[string]any{"field": "approvers", "kind": "team", "id": s.team.ID, "name": "Finance"}
		for _, req := range got.decoded["requests"].([]any) {
			record := req.(map[string]any)["record"].(map[string]any)
			switch req.(map[string]any)["type"] {
			case "approval":
				asked := map[string]any{}
				for _, p := range record["resolvedApprovers"].([]any) {
					asked[p.(map[string]any)["email"].(string)] = p.(map[string]any)["via"]
				}
				assert.Equal(t, map[string]any{
					"bob@example.com": []any{finance},
					"cy@example.com":  []any{finance, map[string]any{"field": "approvers", "kind": "member", "id": s.cy.ID, "name": "cy@example.com"}},
				}, asked)
			case "review":
				for _, p := range record["resolvedReviewers"].([]any) {
					assert.Equal(t, []any{map[string]any{"field": "reviewers", "kind": "team", "id": s.team.ID, "name": "Finance"}}, p.(map[string]any)["via"])
				}
			}
		}
		timeline := got.decoded["timeline"].([]any)
		var actions []string
		for _, e := range timeline {
			actions = append(actions, e.(map[string]any)["requestType"].(string)+":"+e.(map[string]any)["action"].(string))
		}
		assert.Contains(t, actions, "approval:rejected")
		assert.Contains(t, actions, "review:approved")
		assert.Contains(t, actions, "flow:created")
		published := s.do(t, "GET", "/.well-known/assent/evidence-keys", "", "", nil)
		require.Equal(t, 200, published.status)
		keys, err := evidence.ParseKeys(published.body)
		require.NoError(t, err)
		checked, err := evidence.Verify(got.body, keys)
		require.NoError(t, err, "the export verifies as served")
		assert.Equal(t, len(timeline), checked.Entries)

		entry := timeline[2].(map[string]any)
		tampered := bytes.Replace(got.body, []byte(`"id":"`+entry["id"].(string)+`"`), []byte(`"id":"`+entry["id"].(string)+`x"`), 1)
		require.NotEqual(t, got.body, tampered)
		_, err = evidence.Verify(tampered, keys)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "timeline[2]")
		_, err = evidence.Verify(bytes.Replace(got.body, []byte(`"title":"Quarter close"`), []byte(`"title":"Quarter clos"`), 1), keys)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "signature")
		assert.Contains(t, err.Error(), "subject.title was changed")

		// Outside the timeline, the request and the field are named.
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(got.body))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&doc))
		var approvalID string
		for _, r := range doc["requests"].([]any) {
			if req := r.(map[string]any); req["type"] == "approval" {
				approvalID = req["id"].(string)
				req["record"].(map[string]any)["status"] = "approved"
			}
		}
		tampered, err = json.Marshal(doc)
		require.NoError(t, err)
		_, err = evidence.Verify(tampered, keys)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "requests[approval "+approvalID+"].record.status was changed")

		csvBody := s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence?format=csv", s.agentKey, "", nil)
		require.Equal(t, 200, csvBody.status)
		assert.Equal(t, "text/csv; charset=utf-8", csvBody.header.Get("Content-Type"))
		rows, err := csv.NewReader(bytes.NewReader(csvBody.body)).ReadAll()
		require.NoError(t, err)
		assert.Equal(t, []string{"at", "actor", "actorId", "action", "requestType", "requestId", "detail", "entryHash"}, rows[0])
		require.Len(t, rows, len(timeline)+1)
		assert.Equal(t, `'=HYPERLINK("http://evil.example")`, rows[1][1], "a formula is defused")
		for _, row := range rows[1:] {
			for _, cell := range row {
				assert.False(t, cell != "" && strings.ContainsRune("=+-@", rune(cell[0])), "cell %q", cell)
			}
		}
		assert.Equal(t, 400, s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence?format=xml", s.agentKey, "", nil).status)

		report := s.do(t, "GET", "/api/v1/reports/q3/evidence", s.agentKey, "", nil)
		require.Equal(t, 200, report.status, string(report.body))
		_, err = evidence.Verify(report.body, keys)
		require.NoError(t, err)
		assert.Equal(t, "report", report.decoded["subject"].(map[string]any)["type"])

		refused := s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence", s.readOnlyKey, "", nil)
		assert.Equal(t, 403, refused.status)
		assert.Contains(t, errField(refused, "message"), "reports:read, reviews:read, collections:read", "names what is missing")
		assert.Equal(t, 403, s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence", s.cyToken, "", nil).status, "a plain member")
		assert.Equal(t, 200, s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence", s.bobToken, "", nil).status, "an administrator")
	})
}
