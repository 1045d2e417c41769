package bundle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCleanPath(t *testing.T) {
	ok := []string{
		"index.html",
		"assets/app.css",
		"img/chart 1.png",
		"données/é.html",
		".well-known/x.txt",
		"..a/a..b",
		"a/_data/x", "_database.html",
		strings.Repeat("a", MaxSegmentBytes),
		strings.Repeat(strings.Repeat("a", 255)+"/", 3) + strings.Repeat("a", 255), // 1023 bytes
		strings.Repeat("a/", 511) + "aa",                                           // 1024 bytes
	}
	for _, p := range ok {
		got, err := CleanPath(p)
		require.NoError(t, err, "%q", p)
		require.Equal(t, p, got)
	}

	refused := []struct{ path, reason string }{
		{"", "is empty"},
		{"_data/metrics", "keeps for itself"},
		{"_assent/enter", "keeps for itself"},
		{"../x", `".." segment`},
		{"a/../../x", `".." segment`},
		{"a/..", `".." segment`},
		{"./a", `"." segment`},
		{"a/./b", `"." segment`},
		{"/etc/passwd", "is absolute"},
		{"/", "is absolute"},
		{`C:\x`, "backslash"},
		{"C:x", "colon"},
		{"c:/x", "colon"},
		{"a:b", "colon"},
		{`a\b`, "backslash"},
		{`\\server\share`, "backslash"},
		{"a//b", "empty segment"},
		{"a/", "empty segment"},
		{"a\x00b", "control character"},
		{"a\nb", "control character"},
		{"a\x7f", "control character"},
		{"a\u0085", "control character"},
		{"a\xffb", "not valid UTF-8"},
		{strings.Repeat("a", MaxSegmentBytes+1), "segment longer than 255"},
		{strings.Repeat("a/", 512) + "a", "longer than 1024"},
	}
	for _, c := range refused {
		_, err := CleanPath(c.path)
		require.Error(t, err, "%q", c.path)
		require.Contains(t, err.Error(), c.reason, "%q", c.path)
	}
}

func TestFileAbove(t *testing.T) {
	files := map[string]int{"a": 0, "b/c": 1, "b/c/d/e": 2, "x/y": 3}
	above, ok := fileAbove("b/c/d/e", files)
	require.True(t, ok)
	require.Equal(t, "b/c", above)
	_, ok = fileAbove("x/y", files)
	require.False(t, ok)
	_, ok = fileAbove("ab/c", files)
	require.False(t, ok)
}
