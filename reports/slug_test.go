package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/apperr"
)

func TestDeriveSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Q3 Café Review!":           "q3-cafe-review",
		"  Weekly   status -- W12 ": "weekly-status-w12",
		"Ünïcödé Straße":            "unicode-strasse",
		"日本語":                       "report",
		"Versions":                  "versions-report",
		"!!!":                       "report",
	} {
		got := DeriveSlug(title)
		assert.Equal(t, want, got, title)
		assert.NoError(t, CheckSlug(got), title)
	}
	long := DeriveSlug(strings.Repeat("word ", 100))
	assert.LessOrEqual(t, len(long), 196, "room left for a numbered suffix")
	assert.NoError(t, CheckSlug(long))
}

func TestCheckSlug(t *testing.T) {
	for _, ok := range []string{"q3", "team/q3-review", "a/b/c-1"} {
		assert.NoError(t, CheckSlug(ok), ok)
	}
	for _, bad := range []string{"", "Q3", "team//q3", "/q3", "q3/", "-q3", "q3-", "q--3", "q_3", "team/copy", "data/x",
		"a.b", strings.Repeat("a", 201)} {
		assert.True(t, apperr.Is(CheckSlug(bad), apperr.InvalidRequest), bad)
	}
}
