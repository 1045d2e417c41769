package questions_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/questions"
)

func no() *bool { f := false; return &f }

func TestDefineNumbersAndDefaults(t *testing.T) {
	qs, err := questions.Define([]questions.Input{
		{Prompt: "Name", Kind: questions.Text},
		{ID: "colour", Prompt: "Colour", Kind: questions.Choice, Options: []string{"red", "blue"}},
		{Prompt: "Notes", Kind: questions.LongText, Required: no()},
	})
	require.NoError(t, err)
	assert.Equal(t, []questions.Question{
		{ID: "q1", Prompt: "Name", Kind: questions.Text, Required: true},
		{ID: "colour", Prompt: "Colour", Kind: questions.Choice, Options: []string{"red", "blue"}, Required: true},
		{ID: "q3", Prompt: "Notes", Kind: questions.LongText, Required: false},
	}, qs)
}

func TestDefineRefusals(t *testing.T) {
	many := make([]questions.Input, questions.MaxQuestions+1)
	for i := range many {
		many[i] = questions.Input{Prompt: "p", Kind: questions.Text}
	}
	cases := []struct {
		name  string
		in    []questions.Input
		field string
		says  string
	}{
		{"none", nil, "questions", "1 to 40"},
		{"too many", many, "questions", "got 41"},
		{"no prompt", []questions.Input{{Kind: questions.Text, Prompt: "  "}}, "questions[0].prompt", "required"},
		{"bad kind", []questions.Input{{Prompt: "p", Kind: "essay"}}, "questions[0].kind", "text, long_text, number, date, choice, multi_choice, boolean"},
		{"options on text", []questions.Input{{Prompt: "p", Kind: questions.Text, Options: []string{"a", "b"}}}, "questions[0].options", "only for choice"},
		{"one option", []questions.Input{{Prompt: "p", Kind: questions.Choice, Options: []string{"a"}}}, "questions[0].options", "2 to 50"},
		{"blank option", []questions.Input{{Prompt: "p", Kind: questions.MultiChoice, Options: []string{"a", " "}}}, "questions[0].options[1]", "empty"},
		{"twice", []questions.Input{{Prompt: "p", Kind: questions.Choice, Options: []string{"a", "b", "a"}}}, "questions[0].options[2]", "offered twice"},
		{"same id", []questions.Input{{ID: "x", Prompt: "p", Kind: questions.Text}, {ID: "x", Prompt: "p", Kind: questions.Text}}, "questions[1].id", "questions[0]"},
		{"id clashes with a number", []questions.Input{{Prompt: "p", Kind: questions.Text}, {ID: "q1", Prompt: "p", Kind: questions.Text}}, "questions[1].id", "by its position"},
		{"bad id", []questions.Input{{ID: "a b", Prompt: "p", Kind: questions.Text}}, "questions[0].id", "letters, digits"},
		{"long prompt", []questions.Input{{Prompt: strings.Repeat("x", questions.MaxPrompt+1), Kind: questions.Text}}, "questions[0].prompt", "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := questions.Define(c.in)
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, apperr.InvalidRequest, e.Code)
			assert.Equal(t, c.field, e.Field)
			assert.Contains(t, e.Message, c.says)
		})
	}
}

func allKinds(t *testing.T) []questions.Question {
	qs, err := questions.Define([]questions.Input{
		{ID: "name", Prompt: "Name", Kind: questions.Text},
		{ID: "story", Prompt: "Story", Kind: questions.LongText, Required: no()},
		{ID: "count", Prompt: "Count", Kind: questions.Number},
		{ID: "when", Prompt: "When", Kind: questions.Date},
		{ID: "one", Prompt: "One", Kind: questions.Choice, Options: []string{"a", "b"}},
		{ID: "many", Prompt: "Many", Kind: questions.MultiChoice, Options: []string{"a", "b", "c"}},
		{ID: "ok", Prompt: "OK?", Kind: questions.Boolean},
	})
	require.NoError(t, err)
	return qs
}

func raw(m map[string]string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		out[k] = json.RawMessage(v)
	}
	return out
}

func TestCheckKeepsTypedValues(t *testing.T) {
	got, err := questions.Check(allKinds(t), raw(map[string]string{
		"name": `"Ada"`, "story": `null`, "count": ` 12345678901234567890 `, "when": `"2026-12-01"`,
		"one": `"b"`, "many": `["c", "a"]`, "ok": `false`,
	}), true)
	require.NoError(t, err)
	out, _ := json.Marshal(got)
	assert.JSONEq(t, `{"name":"Ada","count":12345678901234567890,"when":"2026-12-01","one":"b","many":["c","a"],"ok":false}`, string(out))
	assert.Equal(t, "12345678901234567890", string(got["count"]), "the number keeps its exact text")
}

func TestCheckRefusals(t *testing.T) {
	full := map[string]string{"name": `"Ada"`, "count": `1`, "when": `"2026-12-01"`, "one": `"a"`, "many": `["a"]`, "ok": `true`}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range full {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name, id string
		answers  map[string]string
		says     string
	}{
		{"unknown question", "nope", with("nope", `"x"`), "no question"},
		{"number as text", "count", with("count", `"12"`), "must be a number, not text"},
		{"text as number", "name", with("name", `12`), "must be text"},
		{"bad date", "when", with("when", `"2026-13-01"`), "YYYY-MM-DD"},
		{"date with time", "when", with("when", `"2026-12-01T10:00:00Z"`), "YYYY-MM-DD"},
		{"not an option", "one", with("one", `"z"`), `"z" is not an option`},
		{"many not an option", "many", with("many", `["a","z"]`), `"z" is not an option`},
		{"many twice", "many", with("many", `["a","a"]`), "chosen twice"},
		{"bool as text", "ok", with("ok", `"yes"`), "true or false"},
		{"missing required", "name", with("name", ""), "required"},
		{"blank required", "name", with("name", `"  "`), "required"},
		{"empty multi required", "many", with("many", `[]`), "required"},
		{"too long", "name", with("name", `"`+strings.Repeat("x", questions.MaxText+1)+`"`), "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := questions.Check(allKinds(t), raw(c.answers), true)
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, apperr.InvalidAnswer, e.Code)
			assert.Equal(t, "answers."+c.id, e.Field)
			assert.Contains(t, e.Message, c.says)
		})
	}
}

func TestDraftMayLeaveRequiredUnanswered(t *testing.T) {
	got, err := questions.Check(allKinds(t), raw(map[string]string{"name": `""`, "count": `3`}), false)
	require.NoError(t, err)
	assert.Equal(t, map[string]json.RawMessage{"count": json.RawMessage(`3`)}, got)
	_, err = questions.Check(allKinds(t), raw(map[string]string{"count": `"3"`}), false)
	assert.True(t, apperr.Is(err, apperr.InvalidAnswer), "a draft is still typed")
}

// A workflow checks replies, so of several unknown ids the same one is
// named on every run, whatever the map's order.
func TestCheckNamesTheSameUnknownQuestion(t *testing.T) {
	answers := raw(map[string]string{"zz": `"x"`, "aa": `"x"`, "mm": `"x"`, "name": `"Ada"`})
	for range 50 {
		_, err := questions.Check(allKinds(t), answers, true)
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, "answers.aa", e.Field)
	}
}
