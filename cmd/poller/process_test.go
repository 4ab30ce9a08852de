package main

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/callbus/callbus/schemas"
)

// auditSettled audits the stream against the bed's frozen world until the
// poller has caught up (no truth or count problem left) or the deadline passes,
// and returns the last report, with schema problems added. extra are the calls
// of the world's history (sim.Config.History: in neither the truth nor the
// counts) when it was backfilled too.
func (b *bed) auditSettled(t *testing.T, extra int) *audit.Report {
	t.Helper()
	js, w := b.stream(t), b.world
	deadline := time.Now().Add(90 * time.Second)
	for {
		truth := w.ReadTruth(t)
		msgs := readStream(t, js)
		r := audit.Check(msgs, "callcenter")
		before := len(r.Problems)
		r.CompareTruth(truth)
		st := w.Sim.Stats() // the backlog is not in the truth: count it
		r.CompareCounts(st.Calls+extra, st.CallsEnded+extra, st.MetricsFinalized+extra)
		n, _ := b.store.OutboxLen(t.Context())
		if (len(r.Problems) == before && n == 0) || time.Now().After(deadline) {
			v, err := schemas.New()
			if err != nil {
				t.Fatal(err)
			}
			r.Problems = append(r.Problems, audit.ValidateSchemas(msgs, v)...)
			return r
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// auditedTypes are the event types every audited run must have produced.
var auditedTypes = []string{"call.created", "call.ended", "metric.finalized", "participant.status_changed", "user.status_changed"}

func report(t *testing.T, r *audit.Report) {
	t.Helper()
	for _, p := range r.Problems {
		t.Error(p)
	}
	t.Logf("audited %d messages: %v", r.Messages, r.ByType)
	for _, typ := range auditedTypes {
		if r.ByType[typeOf(typ)] == 0 {
			t.Errorf("no %s in the stream: the run did too little to test", typ)
		}
	}
}

// TestCrashSafety kills the poller with SIGKILL at random moments many times, then
// restarts Redis and NATS under it, and audits the stream against the simulator's
// ground truth: one call.created per call, one call.ended and one metric.finalized
// per ended call, unique ids, consistent chains, final states as in the world.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	// The backlog keeps the relay busy at the start, so kills land mid-publish.
	b := startBed(t, redistest.StartDurable, 100, usualWorld(3000))
	w := b.world
	addr := simtest.FreeAddr(t)
	env := b.env("crash-test", addr)
	rnd := newRand(1)
	for i := range 12 {
		c := startPoller(t, env)
		// The killed one's lease runs out first (a new process is a new holder).
		waitRole(t, addr, "leader", 30*time.Second)
		time.Sleep(time.Duration(rnd.IntN(2500)) * time.Millisecond) // a random moment, not a condition
		c.kill(t)
		t.Logf("kill %d done", i+1)
	}
	// Redis and NATS restart under a running poller, which is then killed too.
	js := b.stream(t)
	c := startPoller(t, env)
	waitRole(t, addr, "leader", 30*time.Second)
	streamGrows(t, js, "the new poller to publish")
	b.redis.Restart(t)
	streamGrows(t, js, "the poller to publish after the Redis restart")
	b.nats.Restart(t)
	streamGrows(t, js, "the poller to publish after the NATS restart")
	c.kill(t)

	w.Freeze()
	final := startPoller(t, env)
	r := b.auditSettled(t, 0)
	if err := final.terminate(30 * time.Second); err != nil {
		t.Errorf("poller after SIGTERM: %v\n%s", err, final.stderr.String())
	}
	report(t, r)
	// Finished backlog calls far behind the newest were pruned from Redis, and did
	// not come back as new calls (Check: one call.created per call).
	if n, err := b.store.SnapshotCount(t.Context(), "call"); err != nil || n >= int64(w.Sim.Stats().Calls) {
		t.Errorf("%d call snapshots left of %d calls (%v): nothing was pruned", n, w.Sim.Stats().Calls, err)
	}
}
