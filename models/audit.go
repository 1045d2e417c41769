package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/canonjson"
)

// The audit trail is tamper-evident: every organisation's entries form
// one chain in the order they were written. An entry's hash is
//
//	hex(SHA-256(previous entry's hash ‖ canonical JSON of the entry))
//
// (the first entry's previous hash is empty), so changing or removing any
// past entry breaks the hash of every later one. The chain's end is kept
// in AuditHead, locked by each writer, so concurrent writers queue and
// the chain never forks; (organization, position) is unique besides. Each
// entry inserted becomes the head in its own statement, by a trigger
// (migration 202612120001_audit_head_follows_entries).

// AuditHead is the end of an organisation's audit chain.
type AuditHead struct {
	OrganizationID string `gorm:"primaryKey;size:40"`
	Position       int64  `gorm:"not null"`
	Hash           string `gorm:"size:64;not null"`
}

// writeAudit appends e to its organisation's chain and inserts it, in tx.
// The insert moves the head to it (the audit_head_follows trigger).
func writeAudit(tx *gorm.DB, e *AuditEntry) error {
	head, err := lockedHead(tx, e.OrganizationID)
	if err != nil {
		return err
	}
	e.At = e.At.UTC().Truncate(time.Microsecond)
	e.Position = head.Position + 1
	e.EntryHash = ChainHash(head.Hash, e)
	return tx.Create(e).Error
}

// lockedHead reads the end of an organisation's chain under its row lock,
// making the row for the organisation's first entry (two first writers
// both insert; one insert is a no-op, and both then queue on the lock).
func lockedHead(tx *gorm.DB, orgID string) (*AuditHead, error) {
	var head AuditHead
	take := func() error {
		return tx.Clauses(lockForUpdate(tx)...).Where("organization_id = ?", orgID).Take(&head).Error
	}
	err := take()
	if errors.Is(err, gorm.ErrRecordNotFound) {
		if err = tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&AuditHead{OrganizationID: orgID}).Error; err == nil {
			err = take()
		}
	}
	return &head, err
}

// chainedEntry is an entry as its hash sees it, for code that holds
// its fields apart (the migration that chained the entries written before
// the chain).
func chainedEntry(id, orgID string, flowID *string, subjectType, subjectID string, seq int, action, actorID, actorName, detail string,
	at time.Time, position int64) *AuditEntry {
	return &AuditEntry{ID: id, OrganizationID: orgID, FlowID: flowID, SubjectType: subjectType, SubjectID: subjectID, Seq: seq,
		Action: action, ActorID: actorID, ActorName: actorName, Detail: detail, At: at, Position: position}
}

// ChainHash is the hash of e following an entry whose hash is prev.
func ChainHash(prev string, e *AuditEntry) string {
	sum := sha256.Sum256(append([]byte(prev), CanonicalAudit(e)...))
	return hex.EncodeToString(sum[:])
}

// CanonicalAudit is the JSON an entry's hash covers: its fields (not the
// hash itself) in canonical form, the time in UTC to the microsecond.
func CanonicalAudit(e *AuditEntry) []byte {
	b, err := canonjson.Encode(map[string]any{
		"id": e.ID, "organizationId": e.OrganizationID, "flowId": e.FlowID, "subjectType": e.SubjectType,
		"subjectId": e.SubjectID, "seq": e.Seq, "action": e.Action, "actorId": e.ActorID, "actorName": e.ActorName,
		"detail": e.Detail, "at": e.At.UTC().Format("2006-01-02T15:04:05.000000Z"), "position": e.Position,
	})
	if err != nil {
		panic(err) // strings and numbers always encode
	}
	return b
}

// VerifyChain checks entries, an organisation's chain from position
// from onward in order, against prev (the hash before from): positions
// follow each other and every hash is what its entry and the one before
// give. It names the first entry that fails.
func VerifyChain(entries []AuditEntry, from int64, prev string) error {
	for i := range entries {
		e := &entries[i]
		if e.Position != from+int64(i) {
			return fmt.Errorf("entry %s: position %d where %d was due (an entry is missing or doubled)", e.ID, e.Position, from+int64(i))
		}
		if want := ChainHash(prev, e); e.EntryHash != want {
			return fmt.Errorf("entry %s at position %d: its hash does not match its contents and the entry before", e.ID, e.Position)
		}
		prev = e.EntryHash
	}
	return nil
}

// VerifyAuditChain checks an organisation's whole chain as stored and
// that it ends where its head says.
func (s *EvidenceStore) VerifyAuditChain(ctx context.Context, orgID string) error {
	db := s.db.WithContext(ctx)
	var entries []AuditEntry
	if err := db.Where("organization_id = ?", orgID).Order("position").Find(&entries).Error; err != nil {
		return err
	}
	if err := VerifyChain(entries, 1, ""); err != nil {
		return err
	}
	var head AuditHead
	if err := db.Where("organization_id = ?", orgID).Take(&head).Error; err != nil {
		return notFound(err, "the audit chain of "+orgID)
	}
	if n := int64(len(entries)); head.Position != n || (n > 0 && head.Hash != entries[n-1].EntryHash) {
		return fmt.Errorf("the chain's head says position %d, the chain ends at %d", head.Position, n)
	}
	return nil
}

// nextSeq is the number of subject's next audit entry, for subjects whose
// steps are written under a lock of their own (a mandate's row, the
// organisation's for a delegation), so two steps never take one number.
func nextSeq(tx *gorm.DB, orgID, subjectID string) (int, error) {
	var seq int
	err := tx.Model(&AuditEntry{}).Select("COALESCE(MAX(seq), 0)").Where("organization_id = ? AND subject_id = ?", orgID, subjectID).Scan(&seq).Error
	return seq + 1, err
}
