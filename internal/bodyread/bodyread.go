// Package bodyread bounds how long a client may take to send a request
// body, so one that dribbles bytes cannot hold a connection. The server's
// ReadHeaderTimeout covers only the headers, and a server-wide ReadTimeout
// would also end long-polls: once it passes, the server cancels the
// request's context.
package bodyread

import (
	"net/http"
	"time"
)

// Timeout is how long a request body may take to arrive.
const Timeout = 30 * time.Second

// Bound sets the read deadline of the connection w answers on, for the
// request's body, and returns the function that lifts it once the body is
// read.
func Bound(w http.ResponseWriter) (lift func()) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(Timeout)); err != nil {
		return func() {}
	}
	return func() { _ = rc.SetReadDeadline(time.Time{}) }
}
