// Package assent is the Go SDK of Assent, the human-in-the-loop service
// for AI agents: every operation of its API grouped by resource, the
// long-poll Wait of each request kind, webhook and decision-token
// verification, and Run, which runs a function only after a person
// approved it.
package assent

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Version is the SDK's version, sent in the User-Agent.
const Version = "0.2.0"

// DefaultBaseURL is used when neither New nor ASSENT_BASE_URL names one.
const DefaultBaseURL = "http://127.0.0.1:8080"

// OneDay is the default lifetime of a created request (ExpiresIn).
const OneDay = 24 * time.Hour

// Client calls one Assent instance with one key: an agent key, an admin
// key or a member token. Its resources (Approvals, Reports, Admin.Members,
// …) hold one method per operation of the API. It is safe for concurrent
// use.
type Client struct {
	services
	baseURL    string
	apiKey     string
	userAgent  string
	httpClient *http.Client
	maxRetries int
	backoff    time.Duration
	maxBackoff time.Duration
	now        func() time.Time
	sleep      func(context.Context, time.Duration) error
	keys       keyCache
	observe    func(op string, status int, body []byte) // tests: each answer as received
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (its Timeout bounds each attempt).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.httpClient = h } }

// WithTimeout bounds each attempt (default 90 s, above the 60 s long-poll).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		h := *c.httpClient
		h.Timeout = d
		c.httpClient = &h
	}
}

// WithRetries sets how many times a retryable failure is retried (default 4).
func WithRetries(n int) Option { return func(c *Client) { c.maxRetries = n } }

// WithBackoff sets the first retry's backoff and the cap (default 0.5 s, 8 s).
func WithBackoff(first, max time.Duration) Option {
	return func(c *Client) { c.backoff, c.maxBackoff = first, max }
}

// WithUserAgent appends a product to the User-Agent.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent += " " + ua }
}

// New returns a client of the instance at baseURL with apiKey; empty
// values are read from ASSENT_BASE_URL and ASSENT_API_KEY.
func New(baseURL, apiKey string, opts ...Option) *Client {
	if baseURL == "" {
		baseURL = os.Getenv("ASSENT_BASE_URL")
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if apiKey == "" {
		apiKey = os.Getenv("ASSENT_API_KEY")
	}
	c := &Client{
		baseURL:    strings.TrimRight(baseURL, "/"),
		apiKey:     apiKey,
		userAgent:  "assent-go/" + Version,
		httpClient: &http.Client{Timeout: 90 * time.Second},
		maxRetries: 4,
		backoff:    500 * time.Millisecond,
		maxBackoff: 8 * time.Second,
		now:        time.Now,
		sleep:      sleepCtx,
	}
	for _, o := range opts {
		o(c)
	}
	c.initServices()
	return c
}

// BaseURL is the instance's address as the client uses it.
func (c *Client) BaseURL() string { return c.baseURL }

// CallOption changes one call.
type CallOption func(*callConfig)

type callConfig struct {
	idempotencyKey string
	contentType    string
	header         http.Header
	url            string // a full URL instead of the operation's path (an upload URL)
	noAuth         bool   // no Authorization: the upload URL is the credential
}

// WithIdempotencyKey sends key instead of a fresh one (POST only); pass the
// same key to repeat a call safely from elsewhere.
func WithIdempotencyKey(key string) CallOption { return func(c *callConfig) { c.idempotencyKey = key } }

// WithContentType sets a raw body's type (PutUpload: text/html or application/zip).
func WithContentType(t string) CallOption { return func(c *callConfig) { c.contentType = t } }

// atURL sends a call to u, a URL an answer gave, without the key.
func atURL(u string) CallOption { return func(c *callConfig) { c.url, c.noAuth = u, true } }

// WithHeader adds a request header (If-None-Match, for one).
func WithHeader(name, value string) CallOption {
	return func(c *callConfig) {
		if c.header == nil {
			c.header = http.Header{}
		}
		c.header.Add(name, value)
	}
}

// Ptr returns a pointer to v, for optional fields.
func Ptr[T any](v T) *T { return &v }

// operation is one entry of the generated table.
type operation struct {
	Method, Path string
	PathParams   []string
	Query        []string
	BodyTypes    []string
	SDKMethod    string
}

type expirer interface{ expire(now time.Time) }

func orOneDay(d time.Duration) time.Duration {
	if d <= 0 {
		return OneDay
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// queryOf encodes a generated Params struct (nil allowed): zero values are
// left out, pointers sent when set.
func queryOf(params any) url.Values {
	q := url.Values{}
	v := reflect.ValueOf(params)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return q
	}
	v = reflect.Indirect(v)
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Tag.Get("query")
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue
			}
			f = f.Elem()
		} else if f.IsZero() {
			continue
		}
		switch x := f.Interface().(type) {
		case time.Time:
			q.Set(name, x.UTC().Format(time.RFC3339Nano))
		default:
			q.Set(name, fmt.Sprint(x))
		}
	}
	return q
}

// call sends the operation with the SDK's manners (idempotency key on
// POST, retries with backoff and jitter) and decodes a 2xx into out (nil
// to discard, *[]byte for the raw body).
func (c *Client) call(ctx context.Context, id string, pathArgs []string, query url.Values, body any, out any, opts []CallOption) error {
	op, ok := operations[id]
	if !ok {
		return fmt.Errorf("assent: unknown operation %s", id)
	}
	var cfg callConfig
	for _, o := range opts {
		o(&cfg)
	}
	path := op.Path
	if cfg.url != "" {
		pathArgs, op.PathParams = nil, nil // the URL is whole
	}
	if len(pathArgs) != len(op.PathParams) {
		return fmt.Errorf("assent: %s needs %d path parameters", id, len(op.PathParams))
	}
	for i, name := range op.PathParams {
		if pathArgs[i] == "" {
			return &Error{Code: "invalid_argument", Message: id + " needs " + name, Field: name}
		}
		path = strings.Replace(path, "{"+name+"}", url.PathEscape(pathArgs[i]), 1)
	}
	for k := range query {
		if !contains(op.Query, k) {
			return fmt.Errorf("assent: %s takes no query parameter %q", id, k)
		}
	}
	target := c.baseURL + path
	if cfg.url != "" {
		target = cfg.url
	}
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var data []byte
	contentType := ""
	if raw, ok := body.([]byte); ok {
		data, contentType = raw, cfg.contentType
		if contentType == "" && len(op.BodyTypes) > 0 {
			contentType = op.BodyTypes[0]
		}
	} else if body != nil && !isNilPointer(body) {
		if e, ok := body.(expirer); ok {
			e.expire(c.now())
		}
		var err error
		if data, err = json.Marshal(body); err != nil {
			return fmt.Errorf("assent: encoding the body of %s: %w", id, err)
		}
		contentType = "application/json"
	} else if len(op.BodyTypes) > 0 && op.Method == http.MethodPost {
		data, contentType = []byte("{}"), "application/json"
	}
	key := ""
	if op.Method == http.MethodPost {
		key = cfg.idempotencyKey
		if key == "" {
			key = newKey()
		}
	}
	for attempt := 0; ; attempt++ {
		last := attempt >= c.maxRetries
		req, err := http.NewRequestWithContext(ctx, op.Method, target, bytes.NewReader(data))
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", c.userAgent)
		req.Header.Set("Accept", "application/json")
		if c.apiKey != "" && !cfg.noAuth {
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		for k, vs := range cfg.header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		resp, err := c.httpClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if last {
				return &Error{Code: CodeNetworkError, Message: fmt.Sprintf("%s %s: %v", op.Method, target, err), Err: err}
			}
			if err := c.sleep(ctx, c.delay(attempt, "")); err != nil {
				return err
			}
			continue
		}
		payload, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			if last {
				return &Error{Status: resp.StatusCode, Code: CodeNetworkError, Message: err.Error(), Err: err}
			}
			if err := c.sleep(ctx, c.delay(attempt, "")); err != nil {
				return err
			}
			continue
		}
		if c.observe != nil {
			c.observe(id, resp.StatusCode, payload)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return decode(resp, payload, out)
		}
		apiErr := errorFrom(resp, payload)
		retryable := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests ||
			(resp.StatusCode == http.StatusConflict && apiErr.Code == CodeIdempotencyInProgress)
		if !retryable || last {
			return apiErr
		}
		if err := c.sleep(ctx, c.delay(attempt, resp.Header.Get("Retry-After"))); err != nil {
			return err
		}
	}
}

func decode(resp *http.Response, payload []byte, out any) error {
	if out == nil || len(payload) == 0 || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = payload
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return fmt.Errorf("assent: expected JSON, got %s", mt)
	}
	if err := json.Unmarshal(payload, out); err != nil {
		return fmt.Errorf("assent: decoding the response: %w", err)
	}
	return nil
}

// delay is the wait before retry attempt+1: Retry-After when given
// (capped at a minute), else full jitter over an exponential backoff.
func (c *Client) delay(attempt int, retryAfter string) time.Duration {
	if retryAfter != "" {
		if s, err := strconv.ParseFloat(retryAfter, 64); err == nil && s >= 0 {
			return min(time.Duration(s*float64(time.Second)), time.Minute)
		}
		if t, err := http.ParseTime(retryAfter); err == nil {
			return max(0, min(t.Sub(c.now()), time.Minute))
		}
	}
	ceiling := c.backoff << min(attempt, 30)
	if ceiling > c.maxBackoff || ceiling <= 0 {
		ceiling = c.maxBackoff
	}
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

func newKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return "assent-go-" + hex.EncodeToString(b[:])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isNilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
