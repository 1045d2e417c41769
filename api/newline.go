package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// jsonNewline ends every JSON answer with a newline, as a terminal or a
// line-reading client expects; gin's renderer writes none. It runs
// outermost, so errors written late and replays get it too.
func jsonNewline(c *gin.Context) {
	w := &lastByteWriter{ResponseWriter: c.Writer}
	c.Writer = w
	c.Next()
	h := w.Header()
	// A body sent with its length (c.Data: a dataset's own bytes) is left whole.
	if w.last != 0 && w.last != '\n' && strings.HasPrefix(h.Get("Content-Type"), "application/json") && h.Get("Content-Length") == "" {
		_, _ = w.ResponseWriter.Write([]byte{'\n'})
	}
}

// lastByteWriter remembers the last byte written, 0 before any.
type lastByteWriter struct {
	gin.ResponseWriter
	last byte
}

func (w *lastByteWriter) Write(b []byte) (int, error) {
	if len(b) > 0 {
		w.last = b[len(b)-1]
	}
	return w.ResponseWriter.Write(b)
}

func (w *lastByteWriter) WriteString(s string) (int, error) {
	if s != "" {
		w.last = s[len(s)-1]
	}
	return w.ResponseWriter.WriteString(s)
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (w *lastByteWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
