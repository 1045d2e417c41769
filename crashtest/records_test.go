package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/workflows"
)

// databaseURL is the application database `assent dev` used: the one the
// environment names, else the SQLite file in its data directory.
func (s *service) databaseURL() string {
	if u := os.Getenv("ASSENT_DATABASE_URL"); u != "" {
		return u
	}
	return "sqlite:" + filepath.Join(s.dataDir, "assent.db")
}

// checkRecords reads what the API does not show, the audit trail and the
// outbox, once every request has settled: each request's audit entries are
// numbered 1 to its last transition without a gap, the outbox holds each
// event its final state implies exactly once and no other, a collection
// was reminded at most once, never after settling, and not skipped when it
// stayed open well past its reminder, a review's audit holds each of its
// verdicts once, every organisation's audit chain is whole, and the
// requests table holds every request as its record stands.
func (l *load) checkRecords(approvals []approval, colls []collection, revs []review, r *report) error {
	db, err := models.Open(l.svc.databaseURL())
	if err != nil {
		return err
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	type head struct {
		ID, Kind, Status string
		Seq              int
	}
	var heads, rows []head
	if err := db.Raw("SELECT id, 'approval' AS kind, status, seq FROM approvals UNION ALL SELECT id, 'collection', status, seq FROM collections " +
		"UNION ALL SELECT id, 'review', status, seq FROM reviews").Scan(&heads).Error; err != nil {
		return fmt.Errorf("read request heads: %w", err)
	}
	// The requests table holds every request once, in its record's status
	// (a transition that changes nothing else it holds leaves its seq).
	if err := db.Raw("SELECT id, kind, status FROM requests").Scan(&rows).Error; err != nil {
		return fmt.Errorf("read the requests table: %w", err)
	}
	row := map[string]head{}
	for _, h := range rows {
		row[h.ID] = h
	}
	for _, h := range heads {
		if got, ok := row[h.ID]; !ok || got.Kind != h.Kind || got.Status != h.Status {
			r.problem(&r.RequestRowsOutOfStep, "%s is %s, its row in requests %+v", h.ID, h.Status, got)
		}
		delete(row, h.ID)
	}
	for id := range row {
		r.problem(&r.RequestRowsOutOfStep, "requests holds %s, which has no record", id)
	}
	var audit []struct {
		SubjectID string
		Seq       int
		Action    string
	}
	if err := db.Raw("SELECT subject_id, seq, action FROM audit_entries WHERE subject_type IN (?, ?, ?) ORDER BY subject_id, seq",
		events.RequestApproval, events.RequestCollection, events.RequestReview).Scan(&audit).Error; err != nil {
		return fmt.Errorf("read audit entries: %w", err)
	}
	var outbox []struct{ SubjectID, Kind string }
	if err := db.Raw("SELECT subject_id, kind FROM events WHERE subject_type IN (?, ?, ?)",
		events.RequestApproval, events.RequestCollection, events.RequestReview).Scan(&outbox).Error; err != nil {
		return fmt.Errorf("read outbox: %w", err)
	}
	seqs := map[string][]int{}
	reminded := map[string][]int{}
	verdicts := map[string]int{}
	for _, a := range audit {
		seqs[a.SubjectID] = append(seqs[a.SubjectID], a.Seq)
		switch a.Action {
		case workflows.ActionReminded:
			reminded[a.SubjectID] = append(reminded[a.SubjectID], a.Seq)
		case reviews.VerdictApproved, reviews.VerdictChangesRequested:
			verdicts[a.SubjectID]++
		}
	}
	for _, h := range heads {
		got := seqs[h.ID]
		gapless := len(got) == h.Seq
		for i, s := range got {
			gapless = gapless && s == i+1
		}
		if !gapless {
			r.problem(&r.AuditGaps, "%s is at transition %d but its audit seqs are %v", h.ID, h.Seq, got)
		}
	}
	r.AuditEntries = len(audit)

	// The organisation's audit chain survived every kill whole: no fork,
	// no gap, every hash what its entry and the one before give.
	var orgs []string
	if err := db.Raw("SELECT organization_id FROM audit_heads").Scan(&orgs).Error; err != nil {
		return fmt.Errorf("read audit chains: %w", err)
	}
	store := models.NewStore(db, nil)
	for _, org := range orgs {
		if err := store.VerifyAuditChain(context.Background(), org); err != nil {
			r.problem(&r.AuditGaps, "the audit chain of %s is broken: %v", org, err)
		}
	}

	// Kinds per subject in the outbox, against the kinds the final state
	// implies, each once.
	kinds := map[string][]string{}
	for _, e := range outbox {
		kinds[e.SubjectID] = append(kinds[e.SubjectID], e.Kind)
	}
	r.OutboxEvents = len(outbox)
	compare := func(id string, want []string) {
		got := slices.Clone(kinds[id])
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			r.problem(&r.OutboxMismatches, "%s: the outbox holds %v, its final state implies %v", id, got, want)
		}
	}
	for _, a := range approvals {
		compare(a.ID, expected(a.Status))
	}
	for _, c := range colls {
		compare(c.ID, expectedCollection(c.Status))
		last := len(seqs[c.ID])
		switch at := reminded[c.ID]; {
		case len(at) > 1:
			r.problem(&r.RemindersWrong, "%s was reminded %d times (audit seqs %v)", c.ID, len(at), at)
		case len(at) == 1 && at[0] == last:
			r.problem(&r.RemindersWrong, "%s was reminded after it settled (audit seq %d of %d)", c.ID, at[0], last)
		case len(at) == 0 && c.SettledAt != nil:
			// Its reminder timer was due then; a kill may delay its firing
			// by a restart.
			if _, ok := collections.ReminderAt(c.CreatedAt, c.DueAt, c.ExpiresAt); ok && !c.reminderDue.IsZero() &&
				c.SettledAt.After(c.reminderDue.Add(30*time.Second)) {
				r.problem(&r.RemindersWrong, "%s stayed open until %s, past its reminder at %s, and was never reminded", c.ID,
					c.SettledAt.Format(time.RFC3339), c.reminderDue.Format(time.RFC3339))
			}
		}
		if len(reminded[c.ID]) > 0 {
			r.Reminders++
		}
	}
	for _, v := range revs {
		compare(v.ID, expectedReview(v.Status))
		if verdicts[v.ID] != len(v.Verdicts) {
			r.problem(&r.AuditGaps, "%s holds %d verdicts but its audit %d", v.ID, len(v.Verdicts), verdicts[v.ID])
		}
	}
	return nil
}
