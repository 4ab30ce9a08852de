package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// progress is the stored backfill checkpoint, as far as the test needs it.
type progress struct {
	JobID int64  `json:"job_id"`
	Path  string `json:"path"`
	Size  int64  `json:"size"`
	Pass  int    `json:"pass"`
	Rec   int64  `json:"record"`
}

func readProgress(t *testing.T, store *cursor.Store) (progress, bool) {
	v, ok, err := store.GetCursor(t.Context(), "backfill.progress")
	var p progress
	if err != nil || !ok || v == "" {
		return p, false
	}
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		t.Fatal(err)
	}
	return p, true
}

// leaseFree waits until nobody holds the account's lease (a killed process's
// runs out).
func leaseFree(t *testing.T, store *cursor.Store) {
	simtest.WaitFor(t, 20*time.Second, "the lease to be free", func() bool {
		h, _, _, err := store.Leader(t.Context())
		return err == nil && h == ""
	})
}

// TestBackfillCrash backfills months of history with `poller backfill`, killed
// with SIGKILL while the job runs, while the report downloads and several times
// while it publishes, then finished; a second backfill meanwhile is refused. The
// live poller then takes over. The audit finds every history call announced
// exactly once (created, ended, metric finalized), unique ids, consistent chains
// across the seam, and live calls as the truth has them.
func TestBackfillCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	const history = 8000
	b := startBed(t, redistest.StartDurable, 100, sim.Config{Seed: 11, Agents: 12, CallRate: 4, Backlog: 300,
		History: history, HistorySpan: 120 * 24 * time.Hour})
	w, store := b.world, b.store
	env := b.env("backfill-test", simtest.FreeAddr(t))
	// Up to the simulator's present: the backlog and the first live calls are
	// in both the export and the live poller's first read (the seam).
	args := []string{"backfill", "--since", w.Sim.Start().AddDate(0, -6, 0).Format(time.RFC3339),
		"--until", w.Sim.Now().Add(10 * time.Minute).Format(time.RFC3339), "--dir", t.TempDir(), "--progress", "log"}
	killBackfill(t, env, args, store)
	final := startCommand(t, env, args...)
	simtest.WaitFor(t, 20*time.Second, "the backfill to lead", func() bool { h, _, _, _ := store.Leader(t.Context()); return h != "" })
	second := startCommand(t, env, args...)
	if err := <-second.wait(30 * time.Second); err == nil || !strings.Contains(second.stderr.String(), "only the leader backfills") {
		t.Errorf("a second backfill: %v\n%s", err, second.stderr.String())
	}
	if err := <-final.wait(3 * time.Minute); err != nil {
		t.Fatalf("backfill: %v\n%s", err, final.stderr.String())
	}
	if _, ok := readProgress(t, store); ok {
		t.Error("progress left after the backfill finished")
	}
	leaseFree(t, store)
	poller := startPoller(t, env)
	simtest.WaitFor(t, 60*time.Second, "the live poller's first reads", func() bool {
		v, ok, _ := store.GetCursor(t.Context(), "calls.announced_from")
		return ok && v != ""
	})
	time.Sleep(3 * time.Second) // live calls meanwhile, not a synchronisation
	w.Freeze()
	r := b.auditSettled(t, history)
	_ = poller.terminate(30 * time.Second) // the audit is the verdict
	for _, id := range w.Sim.HistoryCallIDs() {
		if r.Created[id] != 1 || r.Ended[id] != 1 || r.Finalized[id] != 1 {
			t.Errorf("history call %d: %d created, %d ended, %d finalized", id, r.Created[id], r.Ended[id], r.Finalized[id])
			break
		}
	}
	report(t, r)
	hist, live := historyCounts(t, b)
	if hist == 0 || live == 0 {
		t.Errorf("%d history and %d live events: want both", hist, live)
	}
}

// historyCounts counts the stream's events with and without callbushistory.
func historyCounts(t *testing.T, b *bed) (history, live int) {
	t.Helper()
	for _, m := range readStream(t, b.stream(t)) {
		if m.Event.History {
			history++
		} else {
			live++
		}
		if m.Event.History != strings.Contains(string(m.Body), `"`+event.AttrHistory+`":true`) {
			t.Fatalf("event %s: attribute and body disagree", m.Event.ID)
		}
	}
	return history, live
}

// TestLeaderBackfill: with calls_backfill_hours above export_backfill_above_hours,
// the leader of a fresh state reads that history once through the export, then
// polls; every call is announced once.
func TestLeaderBackfill(t *testing.T) {
	if testing.Short() {
		t.Skip("process test in -short mode")
	}
	const history = 1500
	b := startBed(t, redistest.Start, 100, sim.Config{Seed: 12, Agents: 8, CallRate: 4, Backlog: 100,
		History: history, HistorySpan: 60 * 24 * time.Hour})
	store := b.store
	c := startPoller(t, append(b.env("leader-backfill", simtest.FreeAddr(t)),
		"CALLBUS_CALLS_BACKFILL_HOURS=2400", "CALLBUS_EXPORT_BACKFILL_ABOVE_HOURS=168"))
	simtest.WaitFor(t, 60*time.Second, "the leader's backfill", func() bool {
		v, ok, _ := store.GetCursor(t.Context(), "backfill.done")
		return ok && v != ""
	})
	time.Sleep(2 * time.Second) // live calls meanwhile, not a synchronisation
	b.world.Freeze()
	r := b.auditSettled(t, history)
	_ = c.terminate(30 * time.Second) // the audit is the verdict
	report(t, r)
	if hist, _ := historyCounts(t, b); hist == 0 {
		t.Error("no history event")
	}
}

// killBackfill starts the backfill and kills it with SIGKILL, again and again:
// while the job runs, once the report is known (downloading), and at random
// moments while it publishes; each time it waits for the killed one's lease to
// run out.
func killBackfill(t *testing.T, env, args []string, store *cursor.Store) {
	rnd := newRand(2)
	kills := []func(p progress, ok bool) bool{
		func(p progress, ok bool) bool { return ok && p.JobID != 0 },                 // the job runs
		func(p progress, ok bool) bool { return ok && p.Path != "" },                 // the report is known: downloading
		func(p progress, ok bool) bool { return ok && p.Size > 0 },                   // publishing
		func(p progress, ok bool) bool { return ok && p.Rec > 0 },                    // publishing, part committed
		func(p progress, ok bool) bool { return ok && (p.Pass > 0 || p.Rec > 4000) }, // later
	}
	for i, cond := range kills {
		c := startCommand(t, env, args...)
		simtest.WaitFor(t, 60*time.Second, "the backfill's progress", func() bool { return cond(readProgress(t, store)) })
		if i >= 2 {
			time.Sleep(time.Duration(rnd.IntN(800)) * time.Millisecond) // a random moment, not a condition
		}
		p, _ := readProgress(t, store)
		c.kill(t)
		t.Logf("kill %d: job %d, report %v, %d bytes downloaded, pass %d, record %d", i+1, p.JobID, p.Path != "", p.Size, p.Pass, p.Rec)
		leaseFree(t, store)
	}
}
