// Package logging builds the process logger: JSON through log/slog, with
// Temporal's server and SDK loggers bridged into it.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/gin-gonic/gin"
	sdklog "go.temporal.io/sdk/log"
	serverlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// New returns a JSON slog logger writing to w at the given level; a
// record logged with a context inside a trace carries its trace_id and
// span_id.
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(traceHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

// Route is what a log line names of a request's address: its route as
// registered ("/uploads/:ticket"), "" when none matched. Never the path:
// a parameter may be a bearer secret (an upload's ticket, an emailed
// decision link's token) whatever it is called, and whoever reads the
// logs must not be able to use it; nor the query (a sign-in link's token).
func Route(c *gin.Context) string {
	return c.FullPath()
}

// SDK adapts l for the Temporal SDK (clients and workers).
func SDK(l *slog.Logger) sdklog.Logger {
	return sdklog.NewStructuredLogger(l)
}

// Server adapts l for the embedded Temporal server. The server is chatty, so
// records below minLevel are dropped.
func Server(l *slog.Logger, minLevel slog.Level) *ServerLogger {
	return &ServerLogger{log: l.With("component", "temporal-server"), min: minLevel}
}

// ServerLogger is the embedded Temporal server's logger.
type ServerLogger struct {
	log      *slog.Logger
	min      slog.Level
	started  atomic.Bool
	stopping atomic.Bool
}

var _ serverlog.Logger = (*ServerLogger)(nil)

// Stopping says the server is shutting down. Its services then lose their
// connections to one another and their pollers fail, each with a warning
// that means nothing on a clean stop; from now on those are debug records.
// Errors still show, but for a service found unavailable (a task queue
// matching has closed, say): that is the stop itself.
func (s *ServerLogger) Stopping() { s.stopping.Store(true) }

// Started says the frontend answers. Until then the server's own services
// call it and are told it is not healthy yet, and retry: each such record
// (an Unavailable answer, a system client not made yet) is a debug record
// while the server starts.
func (s *ServerLogger) Started() { s.started.Store(true) }

// systemClientRetry is the warning of the server's own services retrying
// to reach a frontend that is starting.
const systemClientRetry = "error creating sdk client"

func (s *ServerLogger) Debug(msg string, tags ...tag.Tag) { s.emit(slog.LevelDebug, msg, tags) }
func (s *ServerLogger) Info(msg string, tags ...tag.Tag)  { s.emit(slog.LevelInfo, msg, tags) }
func (s *ServerLogger) Warn(msg string, tags ...tag.Tag)  { s.emit(slog.LevelWarn, msg, tags) }
func (s *ServerLogger) Error(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }

// trailerOfACutCall is the frontend's error for a call the stop cut off
// after its headers went out: on a clean stop it means nothing.
const trailerOfACutCall = "unable to add metrics baggage to gRPC trailer"

// The server's panic and fatal levels are logged as errors: the embedding
// process decides whether to stop, not the logger.
func (s *ServerLogger) DPanic(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }
func (s *ServerLogger) Panic(msg string, tags ...tag.Tag)  { s.emit(slog.LevelError, msg, tags) }
func (s *ServerLogger) Fatal(msg string, tags ...tag.Tag)  { s.emit(slog.LevelError, msg, tags) }

func (s *ServerLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	if s.stopping.Load() && (level < slog.LevelError || unavailable(tags) || msg == trailerOfACutCall) ||
		!s.started.Load() && (unavailable(tags) || msg == systemClientRetry) {
		level = slog.LevelDebug
	}
	if level < s.min || !s.log.Enabled(context.Background(), level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	s.log.LogAttrs(context.Background(), level, msg, attrs...)
}

// unavailable reports whether a record is about a call answered
// Unavailable.
func unavailable(tags []tag.Tag) bool {
	for _, t := range tags {
		if t.Key() == "grpc_code" && fmt.Sprint(t.Value()) == "Unavailable" {
			return true
		}
	}
	return false
}
