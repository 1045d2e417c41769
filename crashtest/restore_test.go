package crashtest

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/deploy/local/cluster"
	"github.com/assent-hq/assent/models"
)

// restoreUnderLoad is the restore drill of docs/operations.md, run on the
// cluster from while the load l goes on. It takes a base backup of the
// cluster's PostgreSQL into backup (Assent's and Temporal's databases at
// one instant), then copies the report files; the load goes on a few
// seconds and stops (stopLoad), and the cluster is stopped. A new cluster
// starts in dir from the backup with the same secret key and addresses,
// and becomes l's target, with l's ledger cut at the backup (restoredTo)
// and the receipts of deliveries the restored database does not hold set
// aside. The check then holds it to what any client was told before the
// backup began, as after a kill; what was done after the backup is lost,
// and counted in the figures.
func restoreUnderLoad(t *testing.T, from *cluster.Cluster, backup, dir string, l *load, rcv *receiver, stopLoad func()) (*cluster.Cluster, *restoreFigures) {
	ctx := context.Background()
	time.Sleep(3 * time.Second)
	began := time.Now()
	require.NoError(t, cluster.Backup(ctx, from.Dir(), backup))
	ended := time.Now()
	time.Sleep(4 * time.Second) // what a restore loses
	stopLoad()
	from.Stop()

	restoring := time.Now()
	require.NoError(t, cluster.Restore(ctx, backup, dir, from.Dir()))
	copied := time.Now()
	// Restore gives it the old one's addresses (cluster.Restore says why).
	progress := &stepClock{w: logWriter{t}}
	restored, err := cluster.Start(ctx, cluster.Options{Dir: dir, TLS: true, Progress: progress,
		AssentEnv: receiversOnLoopback, Assent: from.AssentBinary()})
	require.NoError(t, err)
	t.Cleanup(restored.Stop)
	fig := &restoreFigures{BackupSeconds: ended.Sub(began).Seconds(), CopySeconds: copied.Sub(restoring).Seconds()}
	fig.StartSeconds, fig.StartSteps = progress.seconds(time.Now())

	l.svc = &clusterTarget{c: restored, boot: l.svc.keys()}
	fig.Lost, fig.Uncertain = l.restoredTo(began, ended)
	known, err := deliveriesIn(l.svc.databaseURL())
	require.NoError(t, err)
	fig.ReceiptsForgotten = rcv.forget(func(id string) bool { return known[id] })
	return restored, fig
}

// restoreFigures are what a restore drill measures: how long the backup
// took; how long the restore took, copying the backup into place and then
// starting the cluster on it until it answered (PostgreSQL replaying the
// backup's WAL, Temporal's services, Assent's), in all and by step, the
// harness's builds left out; the acknowledged operations sent after the backup ended (lost, by
// kind); those answered while it ran (kept or lost); and the receipts of
// deliveries the restored database does not hold.
type restoreFigures struct {
	BackupSeconds     float64            `json:"backupSeconds"`
	CopySeconds       float64            `json:"copySeconds"`
	StartSeconds      float64            `json:"startSeconds"`
	StartSteps        map[string]float64 `json:"startSteps"`
	Lost              map[string]int     `json:"acknowledgedThenLost"`
	Uncertain         int                `json:"answeredDuringTheBackup"`
	ReceiptsForgotten int                `json:"receiptsOfLostDeliveries"`
}

// stepClock passes a cluster's progress on, timing each of its start's
// steps ("starting …" lines; the builds before them are left out).
type stepClock struct {
	w     io.Writer
	steps []string
	at    []time.Time
}

func (c *stepClock) Write(p []byte) (int, error) {
	if step, ok := bytes.CutPrefix(bytes.TrimSpace(p), []byte("starting ")); ok {
		c.steps, c.at = append(c.steps, string(step)), append(c.at, time.Now())
	}
	return c.w.Write(p)
}

// seconds are each step's, up to done, and their sum.
func (c *stepClock) seconds(done time.Time) (total float64, each map[string]float64) {
	each = map[string]float64{}
	for i, step := range c.steps {
		end := done
		if i+1 < len(c.at) {
			end = c.at[i+1]
		}
		each[step] = end.Sub(c.at[i]).Seconds()
		total += each[step]
	}
	return total, each
}

// restoredTo cuts the ledger at a backup taken from began to ended, as a
// restore from it leaves the service: an op answered before the backup
// began is in it; one sent after it ended is not (dropped, and counted by
// kind when it was acknowledged); one answered between may be either, so
// it is held to nothing, like an op that got no answer.
func (l *load) restoredTo(began, ended time.Time) (lost map[string]int, uncertain int) {
	lost = map[string]int{}
	kept := l.ops[:0]
	for _, o := range l.ops {
		switch {
		case o.sent.After(ended):
			if o.acknowledged() {
				lost[o.kind]++
			}
			continue
		case o.status != 0 && o.answered.After(began):
			o.status, o.uncertain = 0, true
			uncertain++
		}
		kept = append(kept, o)
	}
	l.ops = kept
	return lost, uncertain
}

// deliveriesIn are the delivery ids a database holds.
func deliveriesIn(databaseURL string) (map[string]bool, error) {
	db, err := models.Open(databaseURL)
	if err != nil {
		return nil, err
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	var ids []string
	if err := db.Raw("SELECT id FROM deliveries").Scan(&ids).Error; err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	return known, nil
}
