// Package slacktest is a fake Slack for tests and `assent dev`: the Web
// API methods Assent calls (users.info, chat.postMessage, views.open) for
// slack-go pointed at it with its API URL option, response_url and
// incoming-webhook addresses that keep what they are sent, and
// interaction requests signed exactly as Slack signs them.
package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Server is a fake Slack workspace with one app whose bot token is Token.
type Server struct {
	srv   *httptest.Server
	Token string

	mu        sync.Mutex
	users     map[string]slack.User
	lookups   map[string]int
	posts     []Post
	views     []OpenedView
	responses map[string][]slack.WebhookMessage
	hooks     map[string][][]byte
}

// Post is one chat.postMessage call.
type Post struct {
	Channel, Text string
	Blocks        slack.Blocks
}

// OpenedView is one views.open call.
type OpenedView struct {
	TriggerID string
	View      slack.View
}

// New starts the fake on this machine; Close stops it.
func New(token string) *Server {
	s := &Server{Token: token, users: map[string]slack.User{}, lookups: map[string]int{},
		responses: map[string][]slack.WebhookMessage{}, hooks: map[string][][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/users.info", s.usersInfo)
	mux.HandleFunc("POST /api/chat.postMessage", s.postMessage)
	mux.HandleFunc("POST /api/views.open", s.viewsOpen)
	mux.HandleFunc("POST /response/{name}", s.response)
	mux.HandleFunc("POST /hooks/{name}", s.hook)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the fake.
func (s *Server) Close() { s.srv.Close() }

// URL is the fake's address.
func (s *Server) URL() string { return s.srv.URL }

// APIURL is the Web API's address, for slack-go's OptionAPIURL.
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// ResponseURL is a click's response_url; Responses(name) reads what it
// was sent.
func (s *Server) ResponseURL(name string) string { return s.srv.URL + "/response/" + name }

// HookURL is an incoming webhook's address (Slack's, or a Teams
// workflow's); Hooked(name) reads what it was sent.
func (s *Server) HookURL(name string) string { return s.srv.URL + "/hooks/" + name }

// AddUser adds a member of the workspace with a verified email; a guest
// is a multi-channel guest (is_restricted).
func (s *Server) AddUser(id, email string, guest bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = slack.User{ID: id, Name: strings.ToLower(id), IsRestricted: guest, Profile: slack.UserProfile{Email: email}}
}

// AddStranger adds someone of another workspace, seen through a Slack
// Connect channel (is_stranger), with the email their workspace gives.
func (s *Server) AddStranger(id, email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = slack.User{ID: id, Name: strings.ToLower(id), IsStranger: true, Profile: slack.UserProfile{Email: email}}
}

// Lookups counts users.info calls for a user.
func (s *Server) Lookups(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups[id]
}

// Posts are the chat.postMessage calls so far.
func (s *Server) Posts() []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Post(nil), s.posts...)
}

// Views are the views.open calls so far.
func (s *Server) Views() []OpenedView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]OpenedView(nil), s.views...)
}

// Responses are the messages sent to response_url name.
func (s *Server) Responses(name string) []slack.WebhookMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]slack.WebhookMessage(nil), s.responses[name]...)
}

// Hooked are the bodies sent to incoming webhook name.
func (s *Server) Hooked(name string) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.hooks[name]...)
}

// authorised checks the bot token, sent as a form field or a bearer
// token as slack-go does per method.
func (s *Server) authorised(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") == "Bearer "+s.Token || r.PostFormValue("token") == s.Token {
		return true
	}
	answer(w, map[string]any{"ok": false, "error": "invalid_auth"})
	return false
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) usersInfo(w http.ResponseWriter, r *http.Request) {
	if !s.authorised(w, r) {
		return
	}
	id := r.PostFormValue("user")
	s.mu.Lock()
	s.lookups[id]++
	u, ok := s.users[id]
	s.mu.Unlock()
	if !ok {
		answer(w, map[string]any{"ok": false, "error": "user_not_found"})
		return
	}
	answer(w, map[string]any{"ok": true, "user": u})
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	if !s.authorised(w, r) {
		return
	}
	p := Post{Channel: r.PostFormValue("channel"), Text: r.PostFormValue("text")}
	if err := json.Unmarshal([]byte(r.PostFormValue("blocks")), &p.Blocks); err != nil {
		answer(w, map[string]any{"ok": false, "error": "invalid_blocks"})
		return
	}
	s.mu.Lock()
	s.posts = append(s.posts, p)
	n := len(s.posts)
	s.mu.Unlock()
	answer(w, map[string]any{"ok": true, "channel": p.Channel, "ts": fmt.Sprintf("1700000000.%06d", n)})
}

func (s *Server) viewsOpen(w http.ResponseWriter, r *http.Request) {
	if !s.authorised(w, r) {
		return
	}
	var req struct {
		TriggerID string     `json:"trigger_id"`
		View      slack.View `json:"view"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.TriggerID == "" {
		answer(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	s.mu.Lock()
	req.View.ID = fmt.Sprintf("V%04d", len(s.views)+1)
	s.views = append(s.views, OpenedView{TriggerID: req.TriggerID, View: req.View})
	s.mu.Unlock()
	answer(w, map[string]any{"ok": true, "view": req.View})
}

func (s *Server) response(w http.ResponseWriter, r *http.Request) {
	var msg slack.WebhookMessage
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.responses[r.PathValue("name")] = append(s.responses[r.PathValue("name")], msg)
	s.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

func (s *Server) hook(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.hooks[r.PathValue("name")] = append(s.hooks[r.PathValue("name")], body)
	s.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

// Sign returns the headers Slack sends with body at t: its v0 signature
// with secret, and the form's content type.
func Sign(secret string, t time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:", ts)
	mac.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

// Form is an interaction payload as Slack posts it: a form whose payload
// field holds the JSON.
func Form(payload any) []byte {
	raw, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return []byte(url.Values{"payload": {string(raw)}}.Encode())
}

// Click is a block_actions payload: user clicked the button actionID with
// value on a message in channel, Slack's trigger id trigger, and Slack
// will take answers at responseURL.
func Click(user, actionID, value, trigger, responseURL string) map[string]any {
	return map[string]any{
		"type":         "block_actions",
		"team":         map[string]any{"id": "T0TEAM", "domain": "acme"},
		"user":         map[string]any{"id": user, "username": strings.ToLower(user), "team_id": "T0TEAM"},
		"api_app_id":   "A0APP",
		"token":        "legacy-verification-token",
		"container":    map[string]any{"type": "message", "message_ts": "1700000000.000001", "channel_id": "C0CHAN", "is_ephemeral": false},
		"trigger_id":   trigger,
		"channel":      map[string]any{"id": "C0CHAN", "name": "approvals"},
		"message":      map[string]any{"type": "message", "ts": "1700000000.000001", "text": "Approval requested"},
		"response_url": responseURL,
		"actions": []map[string]any{{
			"type": "button", "action_id": actionID, "block_id": "b0", "value": value,
			"text": map[string]any{"type": "plain_text", "text": actionID}, "action_ts": "1700000001.000001",
		}},
	}
}

// Submit is a view_submission payload: user submitted view (as opened,
// with its id, callback id and private metadata) with note typed into
// its input block and action.
func Submit(user string, view slack.View, block, action, note string) map[string]any {
	return map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": "T0TEAM", "domain": "acme"},
		"user":       map[string]any{"id": user, "username": strings.ToLower(user), "team_id": "T0TEAM"},
		"api_app_id": "A0APP",
		"token":      "legacy-verification-token",
		"trigger_id": "trigger-submit-" + view.ID,
		"view": map[string]any{
			"id": view.ID, "type": "modal", "callback_id": view.CallbackID, "private_metadata": view.PrivateMetadata,
			"hash": "h1", "team_id": "T0TEAM", "app_id": "A0APP",
			"state": map[string]any{"values": map[string]any{block: map[string]any{action: map[string]any{"type": "plain_text_input", "value": note}}}},
		},
	}
}
