// Package ids makes the service's prefixed, time-sortable identifiers.
package ids

import (
	"strings"

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

// HasPrefix reports whether id is of the kind named by prefix.
func HasPrefix(id, prefix string) bool {
	return strings.HasPrefix(id, prefix+"_")
}
