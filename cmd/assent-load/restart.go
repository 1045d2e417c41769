package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/assent-hq/assent/deploy/local/cluster"
)

// restart is how long the workers took to serve again after both were
// killed with the backlog in place.
type restart struct {
	// ProbeBeforeMS is a probe's decision → callback before the kill.
	ProbeBeforeMS float64 `json:"probeBeforeMs"`
	// ReadyS is kill → both workers' "worker started".
	ReadyS float64 `json:"readyS"`
	// ProbeAfterS is kill → the callback of a request created and decided
	// after the restart: the workers serve again.
	ProbeAfterS float64 `json:"probeAfterS"`
	// ProbeAfterMS is that probe's decision → callback.
	ProbeAfterMS float64 `json:"probeAfterMs"`
	// CPU is both workers' CPU use (percent of one core) in each ten
	// seconds of the minute after they were ready: settled when it is
	// back to what an idle worker uses.
	CPU []float64 `json:"cpu"`
	// RSSMB is both workers' resident memory a minute after, in MB.
	RSSMB []float64 `json:"rssMB"`
	// RateBefore is the workers' work done a second (progress) over the
	// 30 s before the kill, and Rate the same in each ten seconds after
	// ready: with a backlog, back to RateBefore is the steady state.
	RateBefore float64   `json:"rateBefore,omitempty"`
	Rate       []float64 `json:"rate,omitempty"`
}

// restartWorkers kills both workers (kill -9, the hard case), starts them
// again and times how long until they serve: a probe request's callback
// arrives, and their CPU settles.
func (l *load) restartWorkers(ctx context.Context) (*restart, error) {
	r := &restart{}
	if !l.o.asIs {
		d, err := l.probe(ctx, "before")
		if err != nil {
			return nil, err
		}
		r.ProbeBeforeMS = ms(d)
	}
	done, err := l.progress(ctx)
	if err != nil {
		return nil, err
	}
	time.Sleep(30 * time.Second)
	doneBefore, err := l.progress(ctx)
	if err != nil {
		return nil, err
	}
	r.RateBefore = float64(doneBefore-done) / 30
	l.logf("killing both workers")
	killed := time.Now()
	workers := []string{cluster.Worker1, cluster.Worker2}
	for _, w := range workers {
		if err := l.c.Kill(w); err != nil {
			return nil, err
		}
	}
	for _, w := range workers {
		if err := l.c.Restart(ctx, w); err != nil {
			return nil, err
		}
	}
	r.ReadyS = time.Since(killed).Seconds()
	ready := time.Now()
	if !l.o.asIs {
		d, err := l.probe(ctx, "after")
		if err != nil {
			return nil, err
		}
		r.ProbeAfterS, r.ProbeAfterMS = time.Since(killed).Seconds(), ms(d)
	}
	l.logf("workers ready after %.1f s, serving (probe's callback) after %.1f s", r.ReadyS, r.ProbeAfterS)
	last := cpuTicks(l.c, workers)
	if done, err = l.progress(ctx); err != nil {
		return nil, err
	}
	for at := ready; time.Since(ready) < time.Minute; {
		time.Sleep(time.Until(at.Add(10 * time.Second)))
		now := cpuTicks(l.c, workers)
		doneNow, err := l.progress(ctx)
		if err != nil {
			return nil, err
		}
		took := time.Since(at).Seconds()
		r.CPU = append(r.CPU, float64(now-last)/100/took*100)
		r.Rate = append(r.Rate, float64(doneNow-done)/took)
		last, done, at = now, doneNow, time.Now()
	}
	for _, w := range workers {
		m, err := rss(l.c.PID(w))
		if err != nil {
			return nil, err
		}
		r.RSSMB = append(r.RSSMB, m.NowMB)
	}
	return r, nil
}

// probe creates an approval with a callback, decides it as the hot
// person and returns decision → callback.
func (l *load) probe(ctx context.Context, label string) (time.Duration, error) {
	path := fmt.Sprintf("/callback/probe-%s-%d", label, time.Now().UnixNano())
	var a struct{ ID string }
	body := map[string]any{"title": "Probe " + label, "approvers": []string{l.st.HotEmail}, "callbackUrl": l.rcv.url(path)}
	if err := l.call(ctx, "POST", "/api/v1/approvals", l.st.AgentKey, "probe"+path, body, 201, &a); err != nil {
		return 0, err
	}
	decided := time.Now()
	if err := l.call(ctx, "POST", "/api/v1/approvals/"+a.ID+"/decision", l.st.HotToken, "decide"+path, map[string]any{"decision": "approve"}, 200, nil); err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if at, ok := l.rcv.arrived.Load(path); ok {
			return at.(time.Time).Sub(decided), nil
		}
	}
	return 0, fmt.Errorf("probe %s: no callback within five minutes", label)
}

// cpuTicks sums the processes' user and system CPU time, in clock ticks
// (100 a second).
func cpuTicks(c *cluster.Cluster, names []string) int64 {
	var sum int64
	for _, n := range names {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.PID(n)))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis; utime and stime
		// are the 14th and 15th of the line.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		for _, i := range []int{11, 12} {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			sum += v
		}
	}
	return sum
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
