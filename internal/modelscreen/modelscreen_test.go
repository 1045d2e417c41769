package modelscreen_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/modelscreen"
)

var principles = []modelscreen.Principle{{Name: "Fairness", Concerns: []string{"Treats customers unequally."}}, {Name: "privacy"}}

// TestMessagesWithholdRestrictedFields: the restricted fields, bare names
// at every depth and dotted paths, are gone from what is sent; the rest
// keeps its exact text.
func TestMessagesWithholdRestrictedFields(t *testing.T) {
	req := modelscreen.Request{
		Title: "Refund", Description: "A refund",
		Factors:    []modelscreen.Factor{{Label: "Paid", Status: "ok"}},
		Input:      json.RawMessage(`{"amount":12.50,"ssn":"SSN-TOP","people":[{"name":"Ann","ssn":"SSN-DEEP"}],"customer":{"iban":"IBAN-PATH","city":"Oslo"}}`),
		Metadata:   json.RawMessage(`{"trace":{"ssn":"SSN-META"},"ok":true}`),
		Restricted: []string{"ssn", "customer.iban"},
	}
	msgs, err := modelscreen.Messages(req, principles)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	all := msgs[0].Content + msgs[1].Content
	for _, secret := range []string{"SSN-TOP", "SSN-DEEP", "IBAN-PATH", "SSN-META", `"ssn"`, `"iban"`} {
		assert.NotContains(t, all, secret)
	}
	for _, kept := range []string{`"amount":12.50`, `"city":"Oslo"`, `"name":"Ann"`, `"title":"Refund"`, `"principle":"Fairness"`, "Treats customers unequally."} {
		assert.Contains(t, msgs[1].Content, kept)
	}
}

func TestParse(t *testing.T) {
	long := strings.Repeat("é", modelscreen.MaxConcernLength+50)
	cases := []struct {
		name, content string
		want          []modelscreen.Concern
		err           bool
	}{
		{"object", `{"concerns":[{"principle":"fairness","concern":" Unequal. "}]}`, []modelscreen.Concern{{"Fairness", "Unequal."}}, false},
		{"bare list in a fence", "```json\n[{\"principle\":\"privacy\",\"concern\":\"Shares data.\"}]\n```", []modelscreen.Concern{{"privacy", "Shares data."}}, false},
		{"none", `{"concerns":[]}`, []modelscreen.Concern{}, false},
		{"unknown principle and empty text dropped, twice counted once",
			`{"concerns":[{"principle":"honesty","concern":"x"},{"principle":"privacy","concern":""},{"principle":"privacy","concern":"y"},{"principle":"Privacy","concern":"y"}]}`,
			[]modelscreen.Concern{{"privacy", "y"}}, false},
		{"prose", "I see no problem.", nil, true},
		{"another object", `{"answer":"fine"}`, nil, true},
	}
	for _, c := range cases {
		got, err := modelscreen.Parse(c.content, principles)
		if c.err {
			assert.Error(t, err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}

	var many []string
	for range 15 {
		many = append(many, `{"principle":"privacy","concern":"`+long+`"}`, `{"principle":"fairness","concern":"`+strings.Repeat("a", len(many)+1)+`"}`)
	}
	got, err := modelscreen.Parse(`{"concerns":[`+strings.Join(many, ",")+`]}`, principles)
	require.NoError(t, err)
	assert.Len(t, got, modelscreen.MaxConcerns)
	assert.Equal(t, modelscreen.MaxConcernLength, len([]rune(got[0].Concern)))
	assert.True(t, strings.HasSuffix(got[0].Concern, "…"))
}

// TestScreenSpeaksChatCompletions: the request is a chat completion for
// the model with the key as bearer token; a 5xx may be retried, a 4xx is
// permanent.
func TestScreenSpeaksChatCompletions(t *testing.T) {
	status := http.StatusOK
	var got struct {
		Model    string                `json:"model"`
		Messages []modelscreen.Message `json:"messages"`
	}
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"{\"concerns\":[{\"principle\":\"privacy\",\"concern\":\"Personal data.\"}]}"}}]}`))
	}))
	defer srv.Close()
	e := modelscreen.Endpoint{URL: srv.URL + "/v1/chat/completions", Model: "m1", APIKey: "sk-1"}
	req := modelscreen.Request{Title: "T", Input: json.RawMessage(`{"a":1}`)}
	concerns, err := modelscreen.Screen(context.Background(), srv.Client(), e, req, principles)
	require.NoError(t, err)
	assert.Equal(t, []modelscreen.Concern{{"privacy", "Personal data."}}, concerns)
	assert.Equal(t, "Bearer sk-1", auth)
	assert.Equal(t, "m1", got.Model)
	require.Len(t, got.Messages, 2)

	status = http.StatusServiceUnavailable
	_, err = modelscreen.Screen(context.Background(), srv.Client(), e, req, principles)
	var permanent *modelscreen.Permanent
	require.Error(t, err)
	assert.NotErrorAs(t, err, &permanent)
	status = http.StatusUnauthorized
	_, err = modelscreen.Screen(context.Background(), srv.Client(), e, req, principles)
	assert.ErrorAs(t, err, &permanent)
	assert.NotContains(t, err.Error(), srv.URL)
}
