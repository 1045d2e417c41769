package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/internal/apperr"
)

// selfDecoding decodes itself from any object: its keys are not its
// fields, so the walk must not hold them to its fields.
type selfDecoding struct{ Keys int }

func (s *selfDecoding) UnmarshalJSON(b []byte) error {
	var m map[string]any
	err := json.Unmarshal(b, &m)
	s.Keys = len(m)
	return err
}

type bindInput struct {
	Name  string  `json:"name" validate:"required"`
	Mode  string  `json:"mode" validate:"omitempty,oneof=a b"`
	Note  *string `json:"note" nullable:"true"`
	Items []struct {
		Label string `json:"label"`
	} `json:"items"`
	Free  map[string]any  `json:"free"`
	Raw   json.RawMessage `json:"raw"`
	Self  *selfDecoding   `json:"self"`
	Slice []any           `json:"slice"`
}

func bound(t *testing.T, body string) (*bindInput, error) {
	t.Helper()
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/", nil)
	c.Set(bodyKey, []byte(body))
	var in bindInput
	return &in, Bind(c, &in)
}

// TestBindChecksWhileItWalks: the one walk before decoding names each
// refusal by its path, and leaves free-form values and types that decode
// themselves alone.
func TestBindChecksWhileItWalks(t *testing.T) {
	in, err := bound(t, `{"name":"n","note":null,"items":[{"label":"x"}],"free":{"any":null,"":""},"raw":{"k":null},
		"self":{"whatever":1,"else":null},"slice":[null,""]}`)
	require.NoError(t, err)
	assert.Equal(t, 2, in.Self.Keys)
	assert.Equal(t, "x", in.Items[0].Label)

	for _, c := range []struct{ body, field, msg string }{
		{`{"name":"n","items":[{"label":"x","lable":"y"}]}`, "items[0].lable", `unknown field "lable" at items[0].lable`},
		{`{"name":"n","nmae":"y"}`, "nmae", `unknown field "nmae"`},
		{`{"name":"n","expiresIn":60}`, "expiresIn", `unknown field "expiresIn"`}, // no expiresAt here: no hint
		{`{"name":null}`, "name", "name is null"},
		{`{"name":"n","items":[null]}`, "items[0]", "items[0] is null: a list holds values"},
		{`{"name":"n","mode":""}`, "mode", "mode is empty: give one of a, b"},
		{`{"name":"n","name":"m"}`, "name", "given twice"},
		{`{"name":"n","free":{"a":"x\u0000"}}`, "free.a", "NUL"},
		{`{"name":"n","slice":[1e999]}`, "slice[0]", "beyond the range of a double"},
		{`{"name":"n"} {"name":"m"}`, "", "data after its JSON value"},
	} {
		_, err := bound(t, c.body)
		e, ok := apperr.As(err)
		require.True(t, ok, "%s: %v", c.body, err)
		assert.Equal(t, apperr.InvalidRequest, e.Code, c.body)
		assert.Equal(t, c.field, e.Field, c.body)
		assert.Contains(t, e.Message, c.msg, c.body)
	}
}

// BenchmarkBindComment binds a comment with four images of 1 MB each
// (base64), the heaviest body the API binds.
func BenchmarkBindComment(b *testing.B) {
	image := strings.Repeat("QUJD", 1<<18)
	body, err := json.Marshal(map[string]any{"body": "Looks right.", "images": []map[string]string{{"data": image}, {"data": image}, {"data": image}, {"data": image}}})
	require.NoError(b, err)
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(nil))
	c.Set(bodyKey, body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var in comments.PostInput
		if err := Bind(c, &in); err != nil {
			b.Fatal(err)
		}
	}
}
