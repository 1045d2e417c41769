package passages

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTextIsWhatAReaderSees(t *testing.T) {
	doc := `<!doctype html><html><head><title>Hidden title</title><style>p{color:red}</style>
<script>var secret = "not text";</script></head><body><h1>Q3&nbsp;report</h1>
<p>Revenue rose <strong>4%</strong>   in
EMEA.</p><table><tr><td>a</td><td>b</td></tr></table><noscript>no</noscript><p>Costs &amp; risks.</p></body></html>`
	assert.Equal(t, "Q3 report Revenue rose 4% in EMEA. a b Costs & risks.", Text([]byte(doc)))
}

func TestCountAndSentence(t *testing.T) {
	text := Text([]byte(`<p>First point. Revenue rose 4% in EMEA, mostly in Q3. Costs fell.</p><p>Revenue rose again!</p>`))
	n, at := Count(text, Normalize("rose 4%\n in"))
	assert.Equal(t, 1, n)
	assert.Equal(t, "Revenue rose 4% in EMEA, mostly in Q3.", Sentence(text, at, len("rose 4% in")))
	n, _ = Count(text, "Revenue rose")
	assert.Equal(t, 2, n, "ambiguous")
	n, _ = Count(text, "aa")
	assert.Equal(t, 0, n)
	n, _ = Count("aaa", "aa")
	assert.Equal(t, 2, n, "overlapping occurrences count: the passage is not unique")
	n, at = Count(text, "First")
	assert.Equal(t, "First point.", Sentence(text, at, 5))
	n, at = Count(text, "again")
	assert.Equal(t, "Revenue rose again!", Sentence(text, at, 5))
	assert.Equal(t, 1, n)
}
