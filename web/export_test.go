package web

import (
	"time"

	"github.com/assent-hq/assent/models"
)

// SignCSRF makes a pre-session CSRF token signed by p that expires at
// expires, for tests of expiry.
func SignCSRF(p *Pages, expires time.Time) string { return p.signCSRF(models.NewToken(), expires) }

// StylesheetPath is where the stylesheet is served (its name carries a
// hash of its content).
var StylesheetPath = stylesheet.path

// IconPath is where the pages' icon is served (its name carries a hash of
// its content).
var IconPath = icon.path
