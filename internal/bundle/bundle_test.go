package bundle

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
)

// requireAppErr checks err is an *apperr.Error with code and field, and
// returns it for checks of its message.
func requireAppErr(t *testing.T, err error, code, field string) *apperr.Error {
	t.Helper()
	require.Error(t, err)
	e, ok := apperr.As(err)
	require.True(t, ok, "not an apperr: %v", err)
	require.Equal(t, code, e.Code, e.Message)
	require.Equal(t, field, e.Field, e.Message)
	return e
}

func TestSingle(t *testing.T) {
	files, err := Single("<h1>Report</h1>")
	require.NoError(t, err)
	require.Equal(t, []File{{Path: Index, Content: []byte("<h1>Report</h1>")}}, files)

	files, err = Single(strings.Repeat("a", MaxInlineBytes))
	require.NoError(t, err)
	require.Len(t, files[0].Content, MaxInlineBytes)

	_, err = Single(strings.Repeat("a", MaxInlineBytes+1))
	requireAppErr(t, err, apperr.ContentTooLarge, "content")
	require.Equal(t, 413, apperr.Status(apperr.ContentTooLarge))

	for _, empty := range []string{"", " \n\t"} {
		_, err = Single(empty)
		requireAppErr(t, err, apperr.InvalidRequest, "content")
	}
}

func TestInline(t *testing.T) {
	files, err := Inline([]InlineFile{
		{Path: "assets/app.css", Content: "body{}"},
		{Path: "index.html", Content: "<h1>Report</h1>"},
		{Path: "empty.txt"},
	})
	require.NoError(t, err)
	require.Equal(t, []File{
		{Path: "assets/app.css", Content: []byte("body{}")},
		{Path: "index.html", Content: []byte("<h1>Report</h1>")},
		{Path: "empty.txt", Content: []byte{}},
	}, files)

	// Splits n bytes between index.html and two other files.
	sized := func(n int) []InlineFile {
		return []InlineFile{
			{Path: Index, Content: strings.Repeat("i", n/3)},
			{Path: "a.js", Content: strings.Repeat("a", n/3)},
			{Path: "b.css", Content: strings.Repeat("b", n-2*(n/3))},
		}
	}
	tooMany := make([]InlineFile, MaxArchiveEntries+1)
	for i := range tooMany {
		tooMany[i] = InlineFile{Path: fmt.Sprintf("f%d.html", i)}
	}
	tooMany[0].Path = Index

	cases := []struct {
		name        string
		files       []InlineFile
		code, field string
		message     string
	}{
		{"parent", []InlineFile{{Path: Index}, {Path: "../x"}}, apperr.InvalidRequest, "files[1].path", `".." segment`},
		{"parent inside", []InlineFile{{Path: Index}, {Path: "a/../../x"}}, apperr.InvalidRequest, "files[1].path", `".." segment`},
		{"absolute", []InlineFile{{Path: Index}, {Path: "/etc/passwd"}}, apperr.InvalidRequest, "files[1].path", "absolute"},
		{"drive", []InlineFile{{Path: Index}, {Path: `C:\x`}}, apperr.InvalidRequest, "files[1].path", "backslash"},
		{"backslash", []InlineFile{{Path: Index}, {Path: `a\b`}}, apperr.InvalidRequest, "files[1].path", "backslash"},
		{"empty path", []InlineFile{{Path: Index}, {Path: ""}}, apperr.InvalidRequest, "files[1].path", "empty"},
		{"duplicate", []InlineFile{{Path: "a.css"}, {Path: Index}, {Path: "a.css"}}, apperr.InvalidRequest, "files[2].path", "repeats files[0].path"},
		// No second spelling of a path is rewritten to the first: it is refused.
		{"duplicate spelled otherwise", []InlineFile{{Path: Index}, {Path: "a.css"}, {Path: "./a.css"}}, apperr.InvalidRequest, "files[2].path", `"." segment`},
		{"file and folder", []InlineFile{{Path: "a/b.css"}, {Path: Index}, {Path: "a"}}, apperr.InvalidRequest, "files[0].path", `inside "a"`},
		{"index in a folder", []InlineFile{{Path: "site/index.html"}}, apperr.InvalidRequest, "files", "index.html at the root"},
		{"none", nil, apperr.InvalidRequest, "files", "index.html at the root"},
		{"over size", sized(MaxInlineBytes + 1), apperr.ContentTooLarge, "files", "at most 2097152"},
		{"too many", tooMany, apperr.ContentTooLarge, "files", "at most 10000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Inline(c.files)
			e := requireAppErr(t, err, c.code, c.field)
			require.Contains(t, e.Message, c.message)
		})
	}

	files, err = Inline(sized(MaxInlineBytes))
	require.NoError(t, err)
	require.Len(t, files, 3)

	files, err = Inline(tooMany[:MaxArchiveEntries])
	require.NoError(t, err)
	require.Len(t, files, MaxArchiveEntries)
}

// zeros yields zero bytes without end, counting them.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

func TestHTML(t *testing.T) {
	files, err := HTML(strings.NewReader("<h1>Report</h1>"))
	require.NoError(t, err)
	require.Equal(t, []File{{Path: Index, Content: []byte("<h1>Report</h1>")}}, files)

	_, err = HTML(strings.NewReader("\n"))
	requireAppErr(t, err, apperr.InvalidRequest, "")

	boom := errors.New("connection reset")
	_, err = HTML(io.MultiReader(strings.NewReader("<h1>"), iotest.ErrReader(boom)))
	require.ErrorIs(t, err, boom)
	_, isAppErr := apperr.As(err)
	require.False(t, isAppErr, "a failed read is not the sender's mistake")

	// An endless upload is cut off one byte past the limit.
	var z zeros
	_, err = HTML(&z)
	requireAppErr(t, err, apperr.PayloadTooLarge, "")
	require.LessOrEqual(t, z.n, int64(MaxArchiveBytes+1))
}

func TestReadAtMost(t *testing.T) {
	got, err := readAtMost(strings.NewReader("12345"), 5)
	require.NoError(t, err)
	require.Equal(t, "12345", string(got))

	_, err = readAtMost(strings.NewReader("123456"), 5)
	requireAppErr(t, err, apperr.PayloadTooLarge, "")
}
