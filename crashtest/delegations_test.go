package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Delegation while away, in the load: now and then a member not involved
// in any delegation goes away, naming another such member to stand in
// (the server hands the approvals waiting on them over, through their
// workflows' addDelegate Update, and the reconciler finishes a hand-over a
// kill cut short), or someone away comes back. While someone is away, a
// decision for them may come from who stands in.

const (
	opDelegate       = "delegate"
	opEndDelegation  = "end delegation"
	delegationChance = 2 // in a hundred iterations
	// delegationEvery is the longest the load goes without a delegation
	// op, so some fall between the kills however slow the target.
	delegationEvery = 5 * time.Second
)

// delegations is the load's view of who is away: by delegator, the
// delegate, as the last answered set or end left it. One delegation op
// runs at a time, so no chain forms: a delegation's two people are in no
// other.
type delegations struct {
	turn chan struct{} // one op at a time, across the clients
	mu   sync.Mutex
	away map[string]person
	// stoodIn is, by delegate, everyone they were ever named to stand in
	// for, answered or not: a refusal may rest on an act for either.
	stoodIn map[string][]string
	last    time.Time // the last op's start
}

// due reports whether a delegation op is due: none for delegationEvery.
func (d *delegations) due() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Since(d.last) >= delegationEvery
}

func newDelegations() *delegations {
	return &delegations{turn: make(chan struct{}, 1), away: map[string]person{}, stoodIn: map[string][]string{}}
}

// voices is whose act id's act may count as: their own, or that of anyone
// they were named to stand in for. A person and their stand-in act once
// between them, so either's act refuses the other's.
func (d *delegations) voices(id string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string{id}, d.stoodIn[id]...)
}

// standIn is who stands in for id now, if anyone.
func (d *delegations) standIn(id string) (person, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.away[id]
	return p, ok
}

// set records that from is away, standing in to, or, with no to, back.
func (d *delegations) set(from string, to *person) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if to == nil {
		delete(d.away, from)
	} else {
		d.away[from] = *to
	}
}

// delegator is whom someone who replied or returned a verdict stood in
// for, as the request holds it.
type delegator struct {
	ID string `json:"id"`
}

// voiceOf is whose act an act by by counts as: the person stood in for,
// or by.
func voiceOf(by string, onBehalfOf *delegator) string {
	if onBehalfOf != nil {
		return onBehalfOf.ID
	}
	return by
}

// delegate sends one person away, or brings one back: one op at a time,
// so that a delegation's two people are in no other.
func (l *load) delegate(rng *rand.Rand, people []person) {
	d := l.delegations
	d.turn <- struct{}{}
	defer func() { <-d.turn }()
	d.mu.Lock()
	d.last = time.Now()
	d.mu.Unlock()
	if len(d.away) > 0 && rng.IntN(2) == 0 {
		froms := slices.Sorted(maps.Keys(d.away))
		from := froms[rng.IntN(len(froms))]
		o := &op{kind: opEndDelegation, method: http.MethodDelete, path: "/api/v1/me/delegation", token: personOf(people, from).token,
			key: l.newKey("undelegate"), deciderID: from}
		l.send(o)
		if o.acknowledged() {
			d.set(from, nil)
		}
		return
	}
	free := slices.DeleteFunc(slices.Clone(people), func(p person) bool {
		if p.id == people[0].id {
			return true // the mandate's granter: away, they lend no standing approval (grantMandate)
		}
		for from, to := range d.away {
			if p.id == from || p.id == to.id {
				return true
			}
		}
		return false
	})
	if len(free) < 2 {
		return
	}
	pick := rng.Perm(len(free))
	from, to := free[pick[0]], free[pick[1]]
	body, _ := json.Marshal(map[string]any{"to": to.email, "until": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"note": "away for the crash test"})
	o := &op{kind: opDelegate, method: http.MethodPut, path: "/api/v1/me/delegation", token: from.token,
		key: l.newKey("delegate"), deciderID: from.id, body: string(body)}
	d.mu.Lock()
	d.stoodIn[to.id] = append(d.stoodIn[to.id], from.id)
	d.mu.Unlock()
	l.send(o)
	if o.acknowledged() {
		d.set(from.id, &to)
	}
}

// checkHandedOver: once the load stops, no pending approval waits on
// someone away without asking who stands in for them, as the server
// says who is away; a hand-over a kill cut short is finished by the
// reconciler, so this waits up to a minute for it.
func (l *load) checkHandedOver(ctx context.Context, r *report) error {
	away := map[string]string{}
	for _, p := range l.people() {
		var mine struct {
			Delegation *struct {
				Delegate struct{ ID string } `json:"delegate"`
				Active   bool                `json:"active"`
			} `json:"delegation"`
		}
		if err := l.getAs(p.token, "/api/v1/me/delegation", &mine); err != nil {
			return err
		}
		if mine.Delegation != nil && mine.Delegation.Active {
			away[p.id] = mine.Delegation.Delegate.ID
			r.Away++
		}
	}
	var stranded []string
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	waitUntil(wait, func() bool {
		all, err := l.list()
		if err != nil {
			return false
		}
		stranded = nil
		for _, a := range all {
			if a.Status != "pending" {
				continue
			}
			var asked []string
			for _, p := range a.ResolvedApprovers {
				asked = append(asked, p.ID)
			}
			for _, id := range asked {
				if to, ok := away[id]; ok && !slices.Contains(asked, to) {
					stranded = append(stranded, fmt.Sprintf("%s asks %s, who is away, but not %s, who stands in", a.ID, id, to))
				}
			}
		}
		return len(stranded) == 0
	})
	for _, s := range stranded {
		r.problem(&r.NotHandedOver, "%s", s)
	}
	return nil
}
