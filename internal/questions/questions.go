// Package questions defines the typed questions of a request for
// information and checks answers against them. The service checks the
// questions once at creation; the workflow checks every submitted reply
// with the same code, so what is stored is always typed as asked.
package questions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assent-hq/assent/internal/apperr"
)

// Question kinds.
const (
	Text        = "text"
	LongText    = "long_text"
	Number      = "number"
	Date        = "date"
	Choice      = "choice"
	MultiChoice = "multi_choice"
	Boolean     = "boolean"
)

// Kinds lists every question kind.
var Kinds = []string{Text, LongText, Number, Date, Choice, MultiChoice, Boolean}

// Limits of a set of questions and of the answers to them.
const (
	MaxQuestions    = 40
	MinOptions      = 2
	MaxOptions      = 50
	MaxPrompt       = 500
	MaxHelp         = 2000
	MaxOption       = 200
	MaxText         = 1000
	MaxLongText     = 20000
	MaxIDLength     = 64
	DateLayout      = "2006-01-02"
	fieldQuestions  = "questions"
	fieldAnswersDot = "answers."
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Question is one question as stored and shown.
type Question struct {
	ID       string   `json:"id"`
	Prompt   string   `json:"prompt"`
	Kind     string   `json:"kind"`
	Options  []string `json:"options,omitempty"`
	Required bool     `json:"required"`
	Help     string   `json:"help,omitempty"`
}

// Input is one question as the agent sends it.
type Input struct {
	ID       string   `json:"id"`
	Prompt   string   `json:"prompt"`
	Kind     string   `json:"kind"`
	Options  []string `json:"options" nullable:"true"`
	Required *bool    `json:"required" nullable:"true"`
	Help     string   `json:"help"`
}

// IsChoice reports whether a kind offers options.
func IsChoice(kind string) bool { return kind == Choice || kind == MultiChoice }

// Define checks the questions an agent sent and gives each its id: a
// question without one gets q1, q2, … by its position.
func Define(in []Input) ([]Question, error) {
	if len(in) == 0 || len(in) > MaxQuestions {
		return nil, apperr.Field(apperr.InvalidRequest, fieldQuestions, "questions must hold 1 to %d questions (got %d)", MaxQuestions, len(in))
	}
	out := make([]Question, len(in))
	givenAt := map[string]int{}
	for i, q := range in {
		field := fmt.Sprintf("%s[%d]", fieldQuestions, i)
		id := q.ID
		if id == "" {
			id = "q" + strconv.Itoa(i+1)
		} else if len(id) > MaxIDLength || !idPattern.MatchString(id) {
			return nil, apperr.Field(apperr.InvalidRequest, field+".id", "%s.id must be 1 to %d letters, digits, '-' or '_'", field, MaxIDLength)
		}
		// Without regard to case: the answers are an object keyed by id,
		// which many agents decode matching keys without it.
		if j, taken := givenAt[strings.ToLower(id)]; taken {
			return nil, apperr.Field(apperr.InvalidRequest, field+".id",
				"%s.id %q is also the id of questions[%d], without regard to case (a question without an id is numbered q1, q2, … by its position)", field, id, j)
		}
		givenAt[strings.ToLower(id)] = i
		if strings.TrimSpace(q.Prompt) == "" {
			return nil, apperr.Field(apperr.InvalidRequest, field+".prompt", "%s.prompt is required", field)
		}
		if utf8.RuneCountInString(q.Prompt) > MaxPrompt {
			return nil, apperr.Field(apperr.InvalidRequest, field+".prompt", "%s.prompt must be at most %d characters", field, MaxPrompt)
		}
		if utf8.RuneCountInString(q.Help) > MaxHelp {
			return nil, apperr.Field(apperr.InvalidRequest, field+".help", "%s.help must be at most %d characters", field, MaxHelp)
		}
		if !slices.Contains(Kinds, q.Kind) {
			return nil, apperr.Field(apperr.InvalidRequest, field+".kind", "%s.kind must be one of %s", field, strings.Join(Kinds, ", "))
		}
		if err := checkOptions(field, q); err != nil {
			return nil, err
		}
		out[i] = Question{ID: id, Prompt: q.Prompt, Kind: q.Kind, Options: q.Options, Required: q.Required == nil || *q.Required, Help: q.Help}
	}
	return out, nil
}

func checkOptions(field string, q Input) error {
	field += ".options"
	if !IsChoice(q.Kind) {
		if q.Options != nil {
			return apperr.Field(apperr.InvalidRequest, field, "%s is only for choice and multi_choice questions", field)
		}
		return nil
	}
	if len(q.Options) < MinOptions || len(q.Options) > MaxOptions {
		return apperr.Field(apperr.InvalidRequest, field, "%s must hold %d to %d options (got %d)", field, MinOptions, MaxOptions, len(q.Options))
	}
	for i, o := range q.Options {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case strings.TrimSpace(o) == "":
			return apperr.Field(apperr.InvalidRequest, at, "%s is empty", at)
		case utf8.RuneCountInString(o) > MaxOption:
			return apperr.Field(apperr.InvalidRequest, at, "%s must be at most %d characters", at, MaxOption)
		case slices.Contains(q.Options[:i], o):
			return apperr.Field(apperr.InvalidRequest, at, "%s %q is offered twice", at, o)
		}
	}
	return nil
}

// Check checks a respondent's answers, keyed by question id, and returns
// them typed as stored: no nulls, numbers with their exact text. A draft
// (submit false) may leave required questions unanswered; a submission
// may not.
func Check(qs []Question, answers map[string]json.RawMessage, submit bool) (map[string]json.RawMessage, error) {
	// Sorted, so that of several unknown ids the same one is named on
	// every run, as a replayed workflow must.
	ids := slices.Sorted(maps.Keys(answers)) //workflowcheck:ignore sorted
	for _, id := range ids {
		if !slices.ContainsFunc(qs, func(q Question) bool { return q.ID == id }) {
			return nil, refuse(id, "there is no question %q", id)
		}
	}
	out := map[string]json.RawMessage{}
	for _, q := range qs {
		raw := bytes.TrimSpace(answers[q.ID])
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			if submit && q.Required {
				return nil, refuse(q.ID, "an answer is required")
			}
			continue
		}
		value, empty, err := check(q, raw)
		if err != nil {
			return nil, err
		}
		if empty {
			if submit && q.Required {
				return nil, refuse(q.ID, "an answer is required")
			}
			continue
		}
		out[q.ID] = value
	}
	return out, nil
}

// check types one answer; empty is an answer that says nothing (a blank
// text, no options chosen).
func check(q Question, raw json.RawMessage) (value json.RawMessage, empty bool, err error) {
	switch q.Kind {
	case Text, LongText:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false, refuse(q.ID, "must be text")
		}
		limit := MaxText
		if q.Kind == LongText {
			limit = MaxLongText
		}
		if utf8.RuneCountInString(s) > limit {
			return nil, false, refuse(q.ID, "must be at most %d characters", limit)
		}
		return raw, strings.TrimSpace(s) == "", nil
	case Number:
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var n any
		if d.Decode(&n) != nil {
			return nil, false, refuse(q.ID, "must be a number")
		}
		if _, ok := n.(json.Number); !ok {
			return nil, false, refuse(q.ID, "must be a number, not %s", jsonKind(n))
		}
		return raw, false, nil
	case Date:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false, refuse(q.ID, "must be a date written YYYY-MM-DD")
		}
		if s == "" {
			return nil, true, nil
		}
		if _, err := time.Parse(DateLayout, s); err != nil {
			return nil, false, refuse(q.ID, "must be a date written YYYY-MM-DD (got %q)", s)
		}
		return raw, false, nil
	case Boolean:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, false, refuse(q.ID, "must be true or false")
		}
		return raw, false, nil
	case Choice:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false, refuse(q.ID, "must be one of the options, as text")
		}
		if s == "" {
			return nil, true, nil
		}
		if !slices.Contains(q.Options, s) {
			return nil, false, refuse(q.ID, "%q is not an option; the options are %s", s, quoteAll(q.Options))
		}
		return raw, false, nil
	case MultiChoice:
		var chosen []string
		if json.Unmarshal(raw, &chosen) != nil {
			return nil, false, refuse(q.ID, "must be a list of options")
		}
		for i, s := range chosen {
			if !slices.Contains(q.Options, s) {
				return nil, false, refuse(q.ID, "%q is not an option; the options are %s", s, quoteAll(q.Options))
			}
			if slices.Contains(chosen[:i], s) {
				return nil, false, refuse(q.ID, "%q is chosen twice", s)
			}
		}
		value, _ := json.Marshal(chosen)
		return value, len(chosen) == 0, nil
	}
	return nil, false, refuse(q.ID, "has an unknown kind %q", q.Kind)
}

func refuse(id, format string, args ...any) error {
	field := fieldAnswersDot + id
	return apperr.Field(apperr.InvalidAnswer, field, "%s: %s", field, fmt.Sprintf(format, args...))
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case bool:
		return "true or false"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "that"
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
