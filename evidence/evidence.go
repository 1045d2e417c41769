// Package evidence exports who was asked what, what they were told, what
// they said and who heard of it, for a flow or a report, as one JSON
// document signed with the instance's evidence key, and checks such a
// document offline (Verify). The timeline is the audit chain's entries
// (models/audit.go), each with the hash before it, so an edited entry
// names itself.
package evidence

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"

	"github.com/assent-hq/assent/internal/canonjson"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/wire"
)

// Export is an evidence export.
type Export struct {
	Subject    Subject       `json:"subject"`
	ExportedAt wiretime.Time `json:"exportedAt"`
	Requests   []Request     `json:"requests"`
	Timeline   []Entry       `json:"timeline"`
	Deliveries []Delivery    `json:"deliveries"`
	Digest     Digest        `json:"digest"`
}

// Subject is what the export is about.
type Subject struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Request is one request or report as its wire serializer shows it: who
// was asked (its resolved people), what they were told and what each
// said. A report adds its versions' content hashes and its comment
// threads.
type Request struct {
	Type     string        `json:"type"`
	ID       string        `json:"id"`
	Record   any           `json:"record"`
	Versions []Version     `json:"versions,omitempty"`
	Threads  []wire.Thread `json:"threads,omitempty"`
}

// Version is a report version as readers were shown it: its files'
// SHA-256.
type Version struct {
	Version int                   `json:"version"`
	Status  string                `json:"status"`
	Files   []models.ManifestFile `json:"files"`
}

// Entry is one audited step, with what its chain hash covers.
type Entry struct {
	At             wiretime.Time `json:"at"`
	Actor          string        `json:"actor"`
	ActorID        string        `json:"actorId"`
	Action         string        `json:"action"`
	RequestType    string        `json:"requestType"`
	RequestID      string        `json:"requestId"`
	Detail         string        `json:"detail"`
	EntryHash      string        `json:"entryHash"`
	ID             string        `json:"id"`
	OrganizationID string        `json:"organizationId"`
	FlowID         *string       `json:"flowId"`
	Seq            int           `json:"seq"`
	Position       int64         `json:"position"`
	PreviousHash   string        `json:"previousHash"`
}

// Delivery is how one event reached one receiver.
type Delivery struct {
	ID             string         `json:"id"`
	Event          string         `json:"event"`
	RequestType    string         `json:"requestType"`
	RequestID      string         `json:"requestId"`
	Target         string         `json:"target"`
	EndpointID     *string        `json:"endpointId"`
	Status         string         `json:"status"`
	Attempts       int            `json:"attempts"`
	LastStatusCode int            `json:"lastStatusCode"`
	DeliveredAt    *wiretime.Time `json:"deliveredAt"`
}

// Digest says what the signature covers: the whole export without the
// signature (parts and partsSignature included), in canonical JSON
// (internal/canonjson), signed with the evidence key
// keyId (publicKey, base64url, is published at
// /.well-known/assent/evidence-keys). entriesHash is the SHA-256 of the
// timeline's entry hashes in order; chainHead the organisation's chain
// end when exported.
type Digest struct {
	Algorithm   string    `json:"algorithm"`
	KeyID       string    `json:"keyId"`
	PublicKey   string    `json:"publicKey"`
	EntriesHash string    `json:"entriesHash"`
	ChainHead   ChainHead `json:"chainHead"`
	// Parts and PartsSignature itemise what lies outside the timeline
	// (parts.go), so a verifier names what changed there.
	Parts          map[string]string `json:"parts,omitempty"`
	PartsSignature string            `json:"partsSignature,omitempty"`
	Signature      string            `json:"signature,omitempty"`
}

// ChainHead is an organisation's audit chain end.
type ChainHead struct {
	Position int64  `json:"position"`
	Hash     string `json:"hash"`
}

// Store is what an export reads: the flow or report it is of, what
// they gathered, and the key that signs it.
type Store interface {
	GetFlow(ctx context.Context, orgID, id string) (*models.Flow, error)
	GetReport(ctx context.Context, orgID, idOrSlug string) (*models.Report, error)
	FlowEvidence(ctx context.Context, orgID, id string, requestIDs []string) (*models.Evidence, error)
	ReportEvidence(ctx context.Context, orgID string, r *models.Report, requestIDs []string) (*models.Evidence, error)
	SigningEvidenceKey(ctx context.Context) (*models.EvidenceKey, ed25519.PrivateKey, error)
}

// Service makes exports.
type Service struct {
	Store   Store
	BaseURL string
	// Kinds are the request kinds an export holds the requests of, in the
	// order it lists them (KindOf).
	Kinds []Kind
}

// A Kind is a request kind as an export holds it: its requests in a flow
// or about a report, each as its serializer shows it.
type Kind struct {
	read func(ctx context.Context, orgID string, of attachment, id, baseURL string) ([]Request, error)
}

// attachment is how a request belongs to what an export is of.
type attachment int

const (
	inFlow attachment = iota
	aboutReport
)

// Attached reads a kind's requests attached to a flow or about a report
// (the kind's service, through requests.Lifecycle).
type Attached[T any] interface {
	Kind() string
	Head(rec *T) requests.Head
	InFlow(ctx context.Context, orgID, flowID string) ([]T, error)
	AboutReport(ctx context.Context, orgID, reportID string) ([]T, error)
}

// KindOf is the kind whose requests a reads, each serialized by
// serialize: its wire form, as the API shows it.
func KindOf[T, W any](a Attached[T], serialize func(rec *T, baseURL string) W) Kind {
	return Kind{read: func(ctx context.Context, orgID string, of attachment, id, baseURL string) ([]Request, error) {
		find := a.InFlow
		if of == aboutReport {
			find = a.AboutReport
		}
		recs, err := find(ctx, orgID, id)
		out := make([]Request, len(recs))
		for i := range recs {
			out[i] = Request{Type: a.Kind(), ID: a.Head(&recs[i]).ID, Record: serialize(&recs[i], baseURL)}
		}
		return out, err
	}}
}

// Flow exports flow id of the organisation.
func (s *Service) Flow(ctx context.Context, orgID, id string) (*Export, error) {
	f, err := s.Store.GetFlow(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	return s.export(ctx, orgID, Subject{Type: "flow", ID: f.ID, Title: f.Title}, inFlow, func(ids []string) (*models.Evidence, error) {
		return s.Store.FlowEvidence(ctx, orgID, f.ID, ids)
	})
}

// Report exports a report of the organisation.
func (s *Service) Report(ctx context.Context, orgID, idOrSlug string) (*Export, error) {
	r, err := s.Store.GetReport(ctx, orgID, idOrSlug)
	if err != nil {
		return nil, err
	}
	return s.export(ctx, orgID, Subject{Type: "report", ID: r.ID, Title: r.Title}, aboutReport, func(ids []string) (*models.Evidence, error) {
		return s.Store.ReportEvidence(ctx, orgID, r, ids)
	})
}

// export is the signed export of subject: the requests of every kind
// attached to it (of), kind after kind, and what gather reads beside them
// and of them (their ids).
func (s *Service) export(ctx context.Context, orgID string, subject Subject, of attachment,
	gather func(requestIDs []string) (*models.Evidence, error)) (*Export, error) {
	var reqs []Request
	var ids []string
	for _, k := range s.Kinds {
		found, err := k.read(ctx, orgID, of, subject.ID, s.BaseURL)
		if err != nil {
			return nil, err
		}
		for _, r := range found {
			ids = append(ids, r.ID)
		}
		reqs = append(reqs, found...)
	}
	e, err := gather(ids)
	if err != nil {
		return nil, err
	}
	return s.sign(ctx, subject, reqs, e)
}

func (s *Service) sign(ctx context.Context, subject Subject, reqs []Request, e *models.Evidence) (*Export, error) {
	key, private, err := s.Store.SigningEvidenceKey(ctx)
	if err != nil {
		return nil, err
	}
	x := s.build(subject, reqs, e)
	x.Digest = Digest{Algorithm: "Ed25519", KeyID: key.ID, PublicKey: base64.RawURLEncoding.EncodeToString(key.PublicKey),
		EntriesHash: EntriesHash(x.Timeline), ChainHead: ChainHead{Position: e.Head.Position, Hash: e.Head.Hash}}
	if x.Digest.Parts, err = partsOf(x); err != nil {
		return nil, err
	}
	listed, err := canonjson.Encode(x.Digest.Parts)
	if err != nil {
		return nil, err
	}
	x.Digest.PartsSignature = base64.StdEncoding.EncodeToString(ed25519.Sign(private, listed))
	body, err := canonjson.Marshal(x)
	if err != nil {
		return nil, err
	}
	x.Digest.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(private, body))
	return x, nil
}

// build is the export of reqs, the requests of every kind, and of e.
func (s *Service) build(subject Subject, reqs []Request, e *models.Evidence) *Export {
	x := &Export{Subject: subject, ExportedAt: wiretime.New(models.Now()), Requests: append([]Request{}, reqs...),
		Timeline: []Entry{}, Deliveries: []Delivery{}}
	for i := range e.Reports {
		r := &e.Reports[i]
		req := Request{Type: "report", ID: r.ID, Record: wire.NewReport(r, nil, s.BaseURL), Versions: []Version{},
			Threads: wire.All(e.Threads[r.ID], func(t *models.CommentThread) wire.Thread { return wire.NewThread(t, s.BaseURL) })}
		for _, v := range e.Versions[r.ID] {
			req.Versions = append(req.Versions, Version{Version: v.Version, Status: v.Status(r), Files: v.Files.V})
		}
		x.Requests = append(x.Requests, req)
	}
	for i := range e.GateChecks {
		c := &e.GateChecks[i]
		x.Requests = append(x.Requests, Request{Type: "gate_check", ID: c.ID, Record: wire.NewGateCheck(c)})
	}
	for i := range e.Receipts {
		r := &e.Receipts[i]
		x.Requests = append(x.Requests, Request{Type: "receipt", ID: r.ID, Record: wire.NewReceipt(r)})
	}
	for i := range e.Mandates {
		m := &e.Mandates[i]
		x.Requests = append(x.Requests, Request{Type: "mandate", ID: m.ID, Record: wire.NewMandate(m, s.BaseURL)})
	}
	for _, en := range e.Entries {
		x.Timeline = append(x.Timeline, Entry{At: wiretime.New(en.At), Actor: en.ActorName, ActorID: en.ActorID, Action: en.Action,
			RequestType: en.SubjectType, RequestID: en.SubjectID, Detail: en.Detail, EntryHash: en.EntryHash, ID: en.ID,
			OrganizationID: en.OrganizationID, FlowID: en.FlowID, Seq: en.Seq, Position: en.Position, PreviousHash: e.PreviousHash[en.Position]})
	}
	for _, d := range e.Deliveries {
		x.Deliveries = append(x.Deliveries, Delivery{ID: d.ID, Event: d.Kind, RequestType: d.SubjectType, RequestID: d.SubjectID,
			Target: d.Target, EndpointID: d.EndpointID, Status: d.Status, Attempts: d.Attempts, LastStatusCode: d.LastStatusCode,
			DeliveredAt: wiretime.Ptr(d.DeliveredAt)})
	}
	return x
}

// partsOf are x's parts, read as a verifier reads the document.
func partsOf(x *Export) (map[string]string, error) {
	body, err := canonjson.Marshal(x)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	return Parts(doc)
}

// EntriesHash is the SHA-256 (hex) of the entries' hashes, in order.
func EntriesHash(entries []Entry) string {
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.EntryHash))
	}
	return hex.EncodeToString(h.Sum(nil))
}
