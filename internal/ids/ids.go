// Package ids makes the service's prefixed, time-sortable identifiers.
package ids

import (
	"crypto/sha256"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Prefixes of every record type, so an id names its kind.
const (
	Organization = "org"
	Member       = "mem"
	Team         = "team"
	Guest        = "gst"
	Key          = "key"
	Approval     = "apr"
	Review       = "rev"
	Collection   = "col"
	Flow         = "flw"
	Report       = "rpt"
	Upload       = "upl"
	Version      = "ver"
	Template     = "tpl"
	Schedule     = "sch"
	Thread       = "thr"
	Comment      = "cmt"
	Webhook      = "whk"
	Delivery     = "dlv"
	Event        = "evt"
	Question     = "qst"
	Rule         = "rul"
	Audit        = "aud"
	Grant        = "grt"
	View         = "viw"
	Send         = "snd"
	EvidenceKey  = "evk"
	Action       = "act"
	GateCheck    = "gck"
	DecisionKey  = "dtk"
	PushSub      = "psh"
	// TokenID is a decision token's jti; Receipt an execution receipt.
	TokenID = "jti"
	Receipt = "rcp"
	// Mandate is a standing mandate; MandateUse one check it allowed.
	Mandate    = "mdt"
	MandateUse = "mdu"
)

// New returns prefix_<lowercase ULID>. ULIDs sort by creation time, so ids
// double as list cursors.
func New(prefix string) string {
	return prefix + "_" + strings.ToLower(ulid.Make().String())
}

// Derived returns the id of prefix's kind that what derives from source
// (an id New made) and parts always gets: the source's time and entropy
// hashed from both. A record made again from the same source (a database
// restored to before it was made, say) keeps its id.
func Derived(prefix, source string, parts ...string) string {
	at := time.Now()
	if _, rest, ok := strings.Cut(source, "_"); ok {
		if u, err := ulid.ParseStrict(strings.ToUpper(rest)); err == nil {
			at = ulid.Time(u.Time())
		}
	}
	h := sha256.New()
	h.Write([]byte(source))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	var u ulid.ULID
	_ = u.SetTime(ulid.Timestamp(at))
	_ = u.SetEntropy(h.Sum(nil)[:10])
	return prefix + "_" + strings.ToLower(u.String())
}

// HasPrefix reports whether id is of the kind named by prefix.
func HasPrefix(id, prefix string) bool {
	return strings.HasPrefix(id, prefix+"_")
}

// Made reports whether s is an id New made with prefix: the prefix, an
// underscore and a lowercase ULID.
func Made(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || strings.ToLower(rest) != rest {
		return false
	}
	_, err := ulid.ParseStrict(strings.ToUpper(rest))
	return err == nil
}

// Wellformed reports whether s has the shape of an id: a lowercase prefix,
// an underscore, then letters and digits only. Text that came from outside
// (a cursor, say) is checked before it reaches a query, where bytes that
// are not UTF-8 would fail on PostgreSQL.
func Wellformed(s string) bool {
	prefix, rest, ok := strings.Cut(s, "_")
	if !ok || prefix == "" || rest == "" || len(s) > 64 {
		return false
	}
	for _, r := range prefix {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Newer reports whether id a was made after id b, whatever their kinds:
// the ULIDs after the prefixes sort by creation time.
func Newer(a, b string) bool {
	_, ua, _ := strings.Cut(a, "_")
	_, ub, _ := strings.Cut(b, "_")
	return ua > ub
}
