package mail_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/mail"
)

func TestMailboxKeepsNewestFirstWithinBound(t *testing.T) {
	b := mail.NewMailbox(3)
	for i := range 5 {
		require.NoError(t, b.Send(context.Background(), mail.Message{To: []string{"a@example.com"},
			Subject: fmt.Sprintf("m%d", i), Text: fmt.Sprintf("open https://assent.test/a/%d now", i)}))
	}
	msgs := b.Messages()
	require.Len(t, msgs, 3)
	assert.Equal(t, "m4", msgs[0].Subject)
	assert.Equal(t, []string{"https://assent.test/a/4"}, msgs[0].Links)
	assert.True(t, strings.HasPrefix(msgs[0].ID, "msg_"))
	assert.False(t, msgs[0].SentAt.IsZero())
}

func TestMailboxPagesEscapeContent(t *testing.T) {
	b := mail.NewMailbox(10)
	require.NoError(t, b.Send(context.Background(), mail.Message{To: []string{"a@example.com"}, Subject: "<script>alert(1)</script>", Text: "hi"}))
	r := gin.New()
	b.Mount(r)

	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/dev/mail", nil))
	assert.Equal(t, 200, w.Code)
	assert.NotContains(t, w.Body.String(), "<script>alert(1)</script>")
	assert.Contains(t, w.Body.String(), "&lt;script&gt;")

	w = httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/dev/mail.json", nil))
	var msgs []map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &msgs))
	require.Len(t, msgs, 1)
	for _, k := range []string{"id", "to", "subject", "text", "html", "links", "sentAt"} {
		assert.Contains(t, msgs[0], k)
	}
}
