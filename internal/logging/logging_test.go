package logging

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/server/common/log/tag"
)

// A stopping server's warnings are expected and not shown; its errors are.
func TestServerLoggerQuietsWarningsWhileStopping(t *testing.T) {
	var out bytes.Buffer
	log := Server(New(&out, slog.LevelInfo), slog.LevelWarn)
	log.Info("chatty")
	log.Warn("before stop")
	log.Stopping()
	log.Warn("connection lost")
	log.Error("disk full")
	log.Error("service failures", tag.NewStringTag("grpc_code", "Unavailable"))
	assert.NotContains(t, out.String(), "chatty")
	assert.Contains(t, out.String(), "before stop")
	assert.NotContains(t, out.String(), "connection lost")
	assert.Contains(t, out.String(), "disk full")
	assert.NotContains(t, out.String(), "service failures", "a service the stop made unavailable")
}
