// Package modelscreen asks a language model, behind an OpenAI-compatible
// chat-completions endpoint, whether a new request raises concerns under
// an organisation's ethics principles, and holds its answer to a schema.
// What it sends is built here alone: the request's input and metadata go
// through rules.Redact, so no restricted field ever leaves.
package modelscreen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/assent-hq/assent/internal/rules"
)

// Limits on what the model's answer may add to a request.
const (
	// MaxConcerns is how many concerns one answer may raise; the rest are
	// dropped.
	MaxConcerns = 10
	// MaxConcernLength is a concern's length in characters, as an ethics
	// rule's concern; a longer one is cut.
	MaxConcernLength = 1000
	// maxAnswer bounds the endpoint's response body.
	maxAnswer = 1 << 20
)

// Request is what the screen reads of a request.
type Request struct {
	Title       string
	Description string
	Factors     []Factor
	// Input and Metadata are JSON objects as the agent sent them; Redact
	// removes Restricted from them before anything is sent.
	Input, Metadata json.RawMessage
	Restricted      []string
}

// Factor is one line of the request's checklist.
type Factor struct {
	Label  string `json:"label"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Principle is one of the organisation's ethics principles, with the
// concerns its ethics rules raise, which tell the model what it guards.
type Principle struct {
	Name     string   `json:"principle"`
	Concerns []string `json:"concerns,omitempty"`
}

// Concern is what the model raised under a principle.
type Concern struct {
	Principle string
	Concern   string
}

// Endpoint is where the screen asks.
type Endpoint struct {
	URL, Model, APIKey string
}

// Permanent is an error another attempt would meet again: the endpoint
// refused the request (a 4xx other than 408 and 429).
type Permanent struct{ Err error }

func (p *Permanent) Error() string { return p.Err.Error() }
func (p *Permanent) Unwrap() error { return p.Err }

const instructions = `You screen requests that an AI agent sends to people for approval. Read the request against the organisation's ethics principles and list the concerns it raises under them. Name only principles from the list, exactly as written; raise a concern only when the request itself gives reason for it; say each in one or two sentences an approver can act on. Some fields may have been withheld from you; do not speculate about them. Answer with JSON only, in this form: {"concerns":[{"principle":"…","concern":"…"}]}, with an empty list when there is none.`

// Messages are the chat messages that ask about req: the instructions,
// then the principles and the request, restricted fields removed, as JSON.
func Messages(req Request, principles []Principle) ([]Message, error) {
	input, _, err := rules.Redact(req.Input, req.Restricted)
	if err != nil {
		return nil, fmt.Errorf("the input could not be read: %w", err)
	}
	meta, _, err := rules.Redact(req.Metadata, req.Restricted)
	if err != nil {
		return nil, fmt.Errorf("the metadata could not be read: %w", err)
	}
	body, err := json.Marshal(struct {
		Principles []Principle `json:"principles"`
		Request    any         `json:"request"`
	}{principles, struct {
		Title       string          `json:"title"`
		Description string          `json:"description,omitempty"`
		Factors     []Factor        `json:"factors,omitempty"`
		Input       json.RawMessage `json:"input,omitempty"`
		Metadata    json.RawMessage `json:"metadata,omitempty"`
	}{req.Title, req.Description, req.Factors, nonEmpty(input), nonEmpty(meta)}})
	if err != nil {
		return nil, err
	}
	return []Message{{Role: "system", Content: instructions}, {Role: "user", Content: string(body)}}, nil
}

func nonEmpty(raw []byte) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return raw
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Screen asks the model at e about req and returns the concerns its answer
// raises under principles, held to Parse's schema. c is the process's
// guarded outbound client: the endpoint is an address an administrator
// gave.
func Screen(ctx context.Context, c *http.Client, e Endpoint, req Request, principles []Principle) ([]Concern, error) {
	msgs, err := Messages(req, principles)
	if err != nil {
		return nil, &Permanent{err}
	}
	body, _ := json.Marshal(map[string]any{"model": e.Model, "messages": msgs, "temperature": 0})
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return nil, &Permanent{fmt.Errorf("the endpoint's address is not usable")}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "Assent-Model-Screen/1")
	if e.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	resp, err := c.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("the endpoint could not be reached: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("the endpoint's answer could not be read: %w", unwrapURL(err))
	}
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return nil, fmt.Errorf("the endpoint answered %d", s)
	default:
		return nil, &Permanent{fmt.Errorf("the endpoint answered %d", s)}
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Choices) == 0 {
		return nil, errors.New("the endpoint's answer is not a chat completion (no choices[0].message.content)")
	}
	return Parse(out.Choices[0].Message.Content, principles)
}

// unwrapURL drops the method and address url.Error adds: the timeline
// says what failed, not where.
func unwrapURL(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}

// Parse reads the model's answer: {"concerns":[{principle, concern}]} or
// the bare list, in a code fence or not. A concern under a principle
// not in principles, or with no text, is dropped; the principle is named
// as the organisation writes it; a concern raised twice counts once; at
// most MaxConcerns are kept, each cut to MaxConcernLength characters. An
// answer of another shape is an error.
func Parse(content string, principles []Principle) ([]Concern, error) {
	content = strings.TrimSpace(content)
	if strings.HasPrefix(content, "```") {
		content = strings.TrimPrefix(content, "```")
		content = strings.TrimPrefix(content, "json")
		content = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(content), "```"))
	}
	type item struct {
		Principle string `json:"principle"`
		Concern   string `json:"concern"`
	}
	var items []item
	if strings.HasPrefix(content, "[") {
		if err := json.Unmarshal([]byte(content), &items); err != nil {
			return nil, errors.New("the model's answer is not a list of concerns")
		}
	} else {
		var wrapped struct {
			Concerns *[]item `json:"concerns"`
		}
		if err := json.Unmarshal([]byte(content), &wrapped); err != nil || wrapped.Concerns == nil {
			return nil, errors.New(`the model's answer is not {"concerns":[…]}`)
		}
		items = *wrapped.Concerns
	}
	out := []Concern{}
	for _, it := range items {
		i := slices.IndexFunc(principles, func(p Principle) bool {
			return strings.EqualFold(strings.TrimSpace(p.Name), strings.TrimSpace(it.Principle))
		})
		text := strings.TrimSpace(it.Concern)
		if i < 0 || text == "" {
			continue
		}
		c := Concern{Principle: principles[i].Name, Concern: cut(text, MaxConcernLength)}
		if slices.Contains(out, c) {
			continue
		}
		if out = append(out, c); len(out) == MaxConcerns {
			break
		}
	}
	return out, nil
}

// cut shortens s to at most n characters, marking the cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
