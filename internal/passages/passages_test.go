package passages

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTextIsWhatAReaderSees(t *testing.T) {
	doc := `<!doctype html><html><head><title>Hidden title</title><style>p{color:red}</style>
<script>var secret = "not text";</script></head><body><h1>Q3&nbsp;report</h1>
<p>Revenue rose <strong>4%</strong>   in
EMEA.</p><table><tr><td>a</td><td>b</td></tr></table><noscript>no</noscript><p>Costs &amp; risks.</p><p>x<b>y</b> z</p></body></html>`
	assert.Equal(t, "Q3 report Revenue rose 4% in EMEA. a b Costs & risks. xy z", Text([]byte(doc)))
}

func TestCountAndSentence(t *testing.T) {
	d := Read([]byte(`<h1>Q3</h1><p>First point. Revenue rose 4% in EMEA, mostly in Q3. Costs fell</p><p>Revenue rose again!</p>`))
	n, at := Count(d.Text, Normalize("rose 4%\n in"))
	assert.Equal(t, 1, n)
	assert.Equal(t, "Revenue rose 4% in EMEA, mostly in Q3.", d.Sentence(at, len("rose 4% in")))
	n, _ = Count(d.Text, "Revenue rose")
	assert.Equal(t, 2, n, "ambiguous")
	n, _ = Count(d.Text, "aa")
	assert.Equal(t, 0, n)
	n, _ = Count("aaa", "aa")
	assert.Equal(t, 2, n, "overlapping occurrences count: the passage is not unique")
	_, at = Count(d.Text, "First")
	assert.Equal(t, "First point.", d.Sentence(at, 5), "a heading before it is another block")
	_, at = Count(d.Text, "Costs")
	assert.Equal(t, "Costs fell", d.Sentence(at, 5), "a block ends a sentence without a full stop")
	n, at = Count(d.Text, "again")
	assert.Equal(t, "Revenue rose again!", d.Sentence(at, 5))
	assert.Equal(t, 1, n)
}
