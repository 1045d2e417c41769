package crashtest

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/assent-hq/assent/internal/events"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// Publishing operations the load sends.
const (
	opCreateReport   = "report create"
	opPublishVersion = "report publish"
	opSendReport     = "report send"
	opDecideHeld     = "held decide"
)

// heldPage is a page the publish scan holds: a password form posting to
// another origin.
const heldPage = `<form action="https://collect.example.net/x"><input type="password" name="p"></form>`

// publish creates a report or publishes a version of one; each publish
// says its Idempotency-Key in changeSummary, so the check finds what each
// key made. One in five is held by the scan. Or, as an owner does soon
// after, an administrator releases or declines a held version.
func (l *load) publish(rng *rand.Rand) {
	if rng.IntN(100) < 30 && l.decideHeld(rng) {
		return
	}
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
	if !o.acknowledged() {
		return
	}
	var told publishAnswer
	_ = json.Unmarshal(o.respBody, &told)
	l.mu.Lock()
	defer l.mu.Unlock()
	if o.kind == opCreateReport {
		l.reports = append(l.reports, told.ID)
	}
	if told.Version.Status == "held" {
		l.held = append(l.held, told.Version.ID)
	}
}

// publishAnswer is what a publish, a release or a decline answers: the
// report, with the version it made or decided.
type publishAnswer struct {
	ID          string `json:"id"`
	LiveVersion *int   `json:"liveVersion"`
	Version     struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"version"`
}

// decideHeld releases or declines, with the admin key, the oldest held
// version the load has not decided, and reports whether there was one.
func (l *load) decideHeld(rng *rand.Rand) bool {
	l.mu.Lock()
	if len(l.held) == 0 {
		l.mu.Unlock()
		return false
	}
	id := l.held[0]
	l.held = l.held[1:]
	l.mu.Unlock()
	decision := "release"
	if rng.IntN(2) == 0 {
		decision = "decline"
	}
	l.send(&op{kind: opDecideHeld, path: "/api/v1/admin/held-versions/" + id + "/" + decision, token: l.svc.keys().AdminKey,
		key: l.newKey("held"), versionID: id, decision: decision})
	return true
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
		var told publishAnswer
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
	decided := l.checkHeldDecisions(all, r)

	// The events each version implies, each once: publish.held for one
	// the scan held, and report.published or report.updated for one that
	// went live. Versions go live in the order of their numbers (a
	// release goes live only above the live version), so the first to go
	// live sent report.published; after a release that may or may not
	// have gone live (its answer lost, or showing a later version live),
	// either will do.
	sort.Slice(all, func(i, j int) bool { return all[i].Version < all[j].Version })
	want := func() (missing []string) {
		got := rcv.deliveries()
		first, unsure := map[string]bool{}, map[string]bool{}
		has := func(v storedVersion, kinds ...string) bool {
			for _, k := range kinds {
				if len(got[[3]string{"webhook", v.ReportID + "/" + v.ID, k}]) > 0 {
					return true
				}
			}
			return false
		}
		for _, v := range all {
			o, wasDecided := decided[v.ID]
			if (v.Status == "held" || v.Status == "declined" || wasDecided) && !has(v, events.PublishHeld) {
				missing = append(missing, events.PublishHeld+" of "+v.ReportID+"/"+v.ID)
			}
			if v.Status != "live" && v.Status != "previous" {
				continue
			}
			wentLive := true
			if wasDecided {
				// The answer shows the report as it was when answered:
				// a version above this one live by then may have taken
				// over from it (a publish at once, or before a retry).
				var told publishAnswer
				if !o.acknowledged() || json.Unmarshal(o.respBody, &told) != nil || told.LiveVersion == nil ||
					*told.LiveVersion > v.Version {
					unsure[v.ReportID] = true
					continue
				}
				wentLive = *told.LiveVersion == v.Version
			}
			kinds := []string{events.ReportUpdated}
			switch {
			case !wentLive:
				continue
			case unsure[v.ReportID]:
				kinds = append(kinds, events.ReportPublished)
			case !first[v.ReportID]:
				kinds = []string{events.ReportPublished}
			}
			first[v.ReportID] = true
			if !has(v, kinds...) {
				missing = append(missing, kinds[0]+" of "+v.ReportID+"/"+v.ID)
			}
		}
		return missing
	}
	// As long as awaitEvents waits: a delivery a kill or the restore cut
	// off is retried on the production schedule, a minute later and then
	// four.
	wait, cancel := context.WithTimeout(ctx, rcv.wait)
	defer cancel()
	waitUntil(wait, func() bool { return len(want()) == 0 })
	for _, m := range want() {
		r.problem(&r.MissingEvents, "the webhook never received %s", m)
	}

	// Every held version is waiting in its workflow, started by the
	// publish or, when a kill lost that start, by the reconciler; the
	// workflow of every one decided has ended.
	for _, v := range all {
		_, wasDecided := decided[v.ID]
		if v.Status != "held" && !wasDecided {
			continue
		}
		if v.Status == "held" {
			r.Held++
		}
		if !waitUntil(wait, func() bool {
			d, err := tc.DescribeWorkflowExecution(ctx, "publish-hold/"+v.ID, "")
			if err != nil {
				return false
			}
			running := d.WorkflowExecutionInfo.Status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
			return running == (v.Status == "held")
		}) {
			r.problem(&r.Lost, "the workflow of version %s, %s, is missing or not in step", v.ID, v.Status)
		}
	}
	return nil
}

// checkHeldDecisions: a release answered 2xx put its version live or
// previous, a decline answered 2xx declined it, and a refused one left it
// held. It returns the decision sent for each version, by version id.
func (l *load) checkHeldDecisions(all []storedVersion, r *report) map[string]*op {
	byID := map[string]storedVersion{}
	for _, v := range all {
		byID[v.ID] = v
	}
	decided := map[string]*op{}
	for _, o := range l.ops {
		if o.kind != opDecideHeld {
			continue
		}
		decided[o.versionID] = o
		v, ok := byID[o.versionID]
		if !ok {
			r.problem(&r.Lost, "held version %s, which a publish was told, is gone", o.versionID)
			continue
		}
		released := v.Status == "live" || v.Status == "previous"
		switch {
		case o.acknowledged() && o.decision == "release" && !released, o.acknowledged() && o.decision == "decline" && v.Status != "declined":
			r.problem(&r.ActionsNotReflected, "%s of %s was answered %d but the version is %s", o.decision, v.ID, o.status, v.Status)
		case o.status != 0 && !o.acknowledged() && v.Status != "held":
			r.problem(&r.RefusedButDone, "%s of %s was refused %d (%.200s) yet the version is %s", o.decision, v.ID, o.status, o.respBody, v.Status)
		case o.acknowledged() && released:
			r.HeldReleased++
		case o.acknowledged():
			r.HeldDeclined++
		}
	}
	return decided
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
