package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/assent-hq/assent/internal/keycheck"

	assent "github.com/assent-hq/assent/sdk/go"
)

// Path is where the streamable HTTP transport is served.
const Path = "/mcp"

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// API is the REST API's handler; the tools' calls are served by it in
	// this process.
	API http.Handler
	// BaseURL is the instance's public address.
	BaseURL string
	// ResourceMetadataURL is the RFC 9728 metadata a 401 points clients to.
	ResourceMetadataURL string
	// MaxBodyBytes bounds a request to /mcp (the API bounds each call again).
	MaxBodyBytes int64
	Version      string
	Logger       *slog.Logger
}

// Handler serves the tools over streamable HTTP at Path. Every request
// needs a bearer key, the API's; the tools' REST calls carry that key.
// It is stateless, so any of several `assent serve` may answer any request.
func Handler(o HTTPOptions) http.Handler {
	inproc := &http.Client{Transport: InProcess(o.API), Timeout: 90 * time.Second}
	clientFor := func(key string, opts ...assent.Option) *assent.Client {
		opts = append([]assent.Option{assent.WithHTTPClient(inproc), assent.WithUserAgent("assent-mcp/" + o.Version)}, opts...)
		return assent.New(o.BaseURL, key, opts...)
	}
	server := NewServer(Options{Version: o.Version, Logger: o.Logger,
		Client: func(_ context.Context, req *sdkmcp.CallToolRequest) (*assent.Client, error) {
			key := ""
			if req.Extra != nil {
				key = bearer(req.Extra.Header)
			}
			if key == "" {
				return nil, errors.New("no bearer key on this request")
			}
			return clientFor(key), nil
		}})
	streamable := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return server },
		&sdkmcp.StreamableHTTPOptions{Stateless: true, Logger: o.Logger, MaxRequestBodyBytes: o.MaxBodyBytes,
			// Every request carries a bearer key, which a rebound page
			// cannot, so the Host check would only refuse proxies.
			DisableLocalhostProtection: true})
	challenge := `Bearer realm="assent"`
	if o.ResourceMetadataURL != "" {
		challenge += `, resource_metadata="` + o.ResourceMetadataURL + `"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The key checked here is the one the tools' API calls present:
		// the API reads it once for the whole request.
		r = r.WithContext(keycheck.Once(inProcessFrom(r)))
		key := bearer(r.Header)
		var refused *assent.Error
		if key == "" {
			refused = &assent.Error{Status: http.StatusUnauthorized, Code: assent.CodeUnauthorized,
				Message: `send the API key as "Authorization: Bearer <key>"`}
		} else if _, err := clientFor(key, assent.WithRetries(0)).Me.Get(r.Context()); err != nil {
			if !errors.As(err, &refused) || refused.Status == 0 {
				refused = &assent.Error{Status: http.StatusServiceUnavailable, Code: assent.CodeServiceUnavailable,
					Message: "the key could not be checked; try again"}
			}
		}
		if refused != nil {
			if refused.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", challenge)
			}
			if ra := refused.Header.Get("Retry-After"); ra != "" {
				w.Header().Set("Retry-After", ra)
			}
			writeError(w, refused)
			return
		}
		streamable.ServeHTTP(w, r)
	})
}

// bearer is the key of an Authorization header, "" without one.
func bearer(h http.Header) string {
	scheme, key, ok := strings.Cut(h.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(key)
}

func writeError(w http.ResponseWriter, e *assent.Error) {
	type body struct {
		Code    assent.ErrorCode `json:"code"`
		Message string           `json:"message"`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]body{"error": {Code: e.Code, Message: e.Message}})
}

// --- the API in process ---------------------------------------------------

type clientAddr struct{}

// inProcessFrom carries the client's address to the API calls made for
// it, so the API sees who is calling, not this process.
func inProcessFrom(r *http.Request) context.Context {
	return context.WithValue(r.Context(), clientAddr{}, r.RemoteAddr)
}

// InProcess is a RoundTripper that serves each request with h, the API's
// handler, without a network hop: the same middleware (authentication,
// scopes, body limits, rate limits, idempotency) runs as for any client.
func InProcess(h http.Handler) http.RoundTripper { return inProcess{h} }

type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.RequestURI = r.URL.RequestURI()
	r.Host = r.URL.Host
	r.RemoteAddr = "127.0.0.1:0"
	if addr, ok := req.Context().Value(clientAddr{}).(string); ok && addr != "" {
		r.RemoteAddr = addr
	}
	w := &recorder{header: http.Header{}}
	p.h.ServeHTTP(w, r)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{Status: http.StatusText(w.status), StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: req}, nil
}

// recorder keeps a response whole; the API writes no stream.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
