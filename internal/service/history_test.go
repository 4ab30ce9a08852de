package service

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/backfill"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/callbus/callbus/schemas"
	"github.com/rs/zerolog"
)

// history is how many history calls the worlds of these tests have, over
// historySpan before their start.
const (
	history     = 300
	historySpan = 20 * 24 * time.Hour
)

// historyBed is the service on a world with history, whose clock runs 30 times
// real time (export jobs take simulated seconds), with real Redis and NATS.
type historyBed struct {
	w     *simtest.World
	rs    *redistest.Server
	ns    *natstest.Server
	store *cursor.Store
	set   config.Settings
	logs  *simtest.Buffer
	log   zerolog.Logger
}

// quickJobs follow export jobs in tens of milliseconds; a job without progress
// for 10 s has stalled (the world's jobs progress every second or so, ten times
// slower on a loaded machine would still pass).
var quickJobs = WithExportJobs(ExportJobs{RetryWait: 50 * time.Millisecond,
	Wait: callcenter.ExportWait{PollInterval: 20 * time.Millisecond, MaxPollInterval: 100 * time.Millisecond, MaxWait: 10 * time.Second}})

func newHistoryBed(t *testing.T, rs *redistest.Server, tweak func(*sim.Config)) *historyBed {
	t.Helper()
	b := &historyBed{rs: rs, ns: natstest.Start(t), logs: &simtest.Buffer{}}
	b.w = newWorld(t, func(c *sim.Config) {
		c.History, c.HistorySpan, c.Backlog = history, historySpan, 10
		if tweak != nil {
			tweak(c)
		}
	})
	b.w.Run(t, 30)
	b.set = testSettings(b.w, b.ns.URL(), rs.URL, "history-1")
	b.set.HTTPAddr = simtest.FreeAddr(t)
	b.log = zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), b.logs)).Level(zerolog.WarnLevel)
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	b.store = store
	return b
}

// exportFirst makes the service's first term read calls_backfill_hours (30
// days: the whole history) through the export.
func (b *historyBed) exportFirst() {
	b.set.CallsBackfill, b.set.ExportBackfillAbove = 30*24*time.Hour, 24*time.Hour
}

// cursor waits for the named cursor to be set and returns it.
func (b *historyBed) cursor(t *testing.T, name string, within time.Duration) string {
	t.Helper()
	var v string
	simtest.WaitFor(t, within, "cursor "+name, func() bool {
		v, _, _ = b.store.GetCursor(t.Context(), name)
		return v != ""
	})
	return v
}

// settle lets the live poller run, freezes the world, waits until the poller
// caught up with it, and stops the service.
func (b *historyBed) settle(t *testing.T, r *running) {
	t.Helper()
	n := r.cycles.snapshot()["calls"]
	simtest.WaitFor(t, 30*time.Second, "live calls cycles", func() bool { return r.cycles.snapshot()["calls"] >= n+5 })
	b.w.Freeze()
	caughtUp(t, r.cycles, b.store)
	r.stop(t)
}

// audit checks the stream against the world's truth: every call of the lists
// (live and backlog) and the history calls of want announced exactly once,
// created, ended and finalized, chains unbroken, schemas valid.
func (b *historyBed) audit(t *testing.T, want []int64) *audit.Report {
	t.Helper()
	msgs := readStream(t, b.ns)
	r := audit.Check(msgs, "callcenter")
	r.CompareTruth(b.w.ReadTruth(t))
	st := b.w.Sim.Stats()
	r.CompareCounts(st.Calls+len(want), st.CallsEnded+len(want), st.MetricsFinalized+len(want))
	v, err := schemas.New()
	if err != nil {
		t.Fatal(err)
	}
	r.Problems = append(r.Problems, audit.ValidateSchemas(msgs, v)...)
	for _, id := range want {
		if r.Created[id] != 1 || r.Ended[id] != 1 || r.Finalized[id] != 1 {
			r.Problems = append(r.Problems, fmt.Sprintf("history call %d: %d created, %d ended, %d finalized",
				id, r.Created[id], r.Ended[id], r.Finalized[id]))
		}
	}
	for _, p := range r.Problems {
		t.Error(p)
	}
	return r
}

// TestHistoryReplacesFailedJobs: an export job that ends "failed", or stalls in
// zip_in_progress, is replaced by a new one; the history is then announced
// whole, once, and the jobs' outcomes are counted.
func TestHistoryReplacesFailedJobs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outcome sim.JobOutcome
	}{{"failed", sim.JobFails}, {"stalled", sim.JobStalls}} {
		t.Run(tc.name, func(t *testing.T) {
			b := newHistoryBed(t, redistest.Start(t), func(c *sim.Config) { c.Jobs = []sim.JobOutcome{tc.outcome} })
			b.exportFirst()
			r := start(t, b.w, b.set, b.log, quickJobs)
			var done struct{ Jobs int }
			if err := json.Unmarshal([]byte(b.cursor(t, "backfill.done", 60*time.Second)), &done); err != nil || done.Jobs != 2 {
				t.Errorf("backfill done with %d jobs (%v), want 2", done.Jobs, err)
			}
			metrics := scrape(t, b.set.HTTPAddr)
			for _, want := range []string{`callbus_backfill_jobs_total{account="acme",outcome="` + tc.name + `"} 1`,
				`callbus_backfill_jobs_total{account="acme",outcome="completed"} 1`, `callbus_backfill_incomplete{account="acme"} 0`} {
				if !strings.Contains(metrics, want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
			b.settle(t, r)
			b.audit(t, b.w.Sim.HistoryCallIDs())
			if !strings.Contains(b.logs.String(), "a new job replaces it") {
				t.Error("no warning about the replaced job")
			}
		})
	}
}

// TestHistoryGivesUp: when every export job of the span fails (3: failed,
// stalled, failed), the backfill gives up and the live poller starts anyway,
// reading calls_backfill_hours through paged reads; the incomplete history shows
// on /metrics, /status and in the log. The list calls are announced once.
func TestHistoryGivesUp(t *testing.T) {
	b := newHistoryBed(t, redistest.Start(t), func(c *sim.Config) {
		c.Jobs = []sim.JobOutcome{sim.JobFails, sim.JobStalls, sim.JobFails}
	})
	b.exportFirst()
	r := start(t, b.w, b.set, b.log, quickJobs)
	inc := b.cursor(t, "backfill.incomplete", 60*time.Second)
	if !strings.Contains(inc, `"jobs":3`) || !strings.Contains(inc, "failed") {
		t.Errorf("incomplete record %s", inc)
	}
	var st Status
	simtest.WaitFor(t, 10*time.Second, "/status to show the incomplete history", func() bool {
		return decodeStatus(httpGet(t, b.set.HTTPAddr, "/status?format=json"), &st) == nil && len(st.Accounts) == 1 &&
			strings.Contains(st.Accounts[0].History, "3 export jobs failed")
	})
	metrics := scrape(t, b.set.HTTPAddr)
	for _, want := range []string{`callbus_backfill_incomplete{account="acme"} 1`,
		`callbus_backfill_jobs_total{account="acme",outcome="failed"} 2`, `callbus_backfill_jobs_total{account="acme",outcome="stalled"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	b.settle(t, r)
	// The backlog (an hour before the start) came from the paged reads of the
	// configured span; history calls are served by reports only.
	rep := b.audit(t, nil)
	if rep.ByType["call.created"] == 0 {
		t.Error("nothing announced: live polling did not start")
	}
	if !strings.Contains(b.logs.String(), "backfill through the export incomplete") {
		t.Error("no error logged about the incomplete history")
	}
}

// TestPollerBackfillFailsWithReason: poller backfill (Run with WithBackfill)
// whose jobs all fail returns an error saying why, so the command exits
// non-zero with the reason.
func TestPollerBackfillFailsWithReason(t *testing.T) {
	b := newHistoryBed(t, redistest.Start(t), func(c *sim.Config) { c.JobFailRate = 1 })
	now := b.w.Sim.Now()
	opts := BackfillOptions{Dir: t.TempDir(),
		Request: backfillRequest(now.Add(-historySpan-time.Hour), now, callcenter.ExportCalls)}
	err := Run(t.Context(), b.set, b.log, WithBackfill(opts), quickJobs)
	if err == nil || !strings.Contains(err.Error(), "backfill incomplete") || !strings.Contains(err.Error(), `status "failed"`) {
		t.Fatalf("poller backfill: %v, want the reason it is incomplete", err)
	}
}

// TestHistoryHostileReport: a zipped report with a manifest and a resource fork
// before it, some calls poisoned (a participant's enqueued_time
// "0000-00-00 00:00:00") and some listed twice (an older copy after the
// current one): each poisoned call is rejected alone, counted and logged by id,
// field and reason; every other call is announced once, from its newest copy.
func TestHistoryHostileReport(t *testing.T) {
	b := newHistoryBed(t, redistest.Start(t), func(c *sim.Config) {
		c.ZipReports, c.Reports = true, sim.ReportFaults{PoisonRate: 0.03, DuplicateRate: 0.05, OddZip: true}
	})
	b.exportFirst()
	r := start(t, b.w, b.set, b.log, quickJobs)
	b.cursor(t, "backfill.done", 60*time.Second)
	var good []int64
	poisoned, twice := 0, 0
	for _, id := range b.w.Sim.HistoryCallIDs() {
		switch {
		case b.w.Sim.PoisonedInReports(id):
			poisoned++
			if !strings.Contains(b.logs.String(), fmt.Sprintf(`"id":%d,"field":"participants.enqueued_time","reason":"bad_time"`, id)) {
				t.Errorf("rejection of call %d not logged", id)
			}
			continue
		case b.w.Sim.DuplicatedInReports(id):
			twice++
		}
		good = append(good, id)
	}
	if poisoned == 0 || twice == 0 {
		t.Fatalf("%d poisoned, %d listed twice: the world tests nothing", poisoned, twice)
	}
	// The report's backlog and live calls may be poisoned too (the live reads
	// serve them well): at least the history's are counted, each once.
	const series = `callbus_records_rejected_total{account="acme",reason="bad_time",resource="calls"} `
	m := grepLines(scrape(t, b.set.HTTPAddr), series)
	if n, err := strconv.Atoi(strings.TrimPrefix(m, series)); err != nil || n < poisoned || n > poisoned+5 {
		t.Errorf("/metrics: %q, want %d to %d rejections", m, poisoned, poisoned+5)
	}
	b.settle(t, r)
	rep := b.audit(t, good)
	for id := range rep.Created {
		if b.w.Sim.PoisonedInReports(id) && id >= b.w.Sim.HistoryCallIDs()[0] {
			t.Errorf("poisoned history call %d announced", id)
		}
	}
}

// TestRollbackBeforeResumedBackfill: Redis is restored from a copy taken while
// a backfill was under way, and the next term resumes the backfill first: its
// report holds calls announced after the copy, and it would announce them again,
// moving the outbox past the stream, before the live poller's check. The
// backfill checks the stream before its first commit and rebuilds the state:
// nothing is announced twice, no chain breaks.
func TestRollbackBeforeResumedBackfill(t *testing.T) {
	b := newHistoryBed(t, redistest.StartWithArgs(t), func(c *sim.Config) { c.History = 0 }) // persistence off: dump.rdb only when asked
	r := start(t, b.w, b.set, b.log, quickJobs)
	r.advanceLive(t, 20)
	r.stop(t)
	// The copy holds a backfill under way (of the last hours and the next), as
	// if one had been killed there.
	now := b.w.Sim.Now()
	commitCursor(t, b.store, "backfill.progress", fmt.Sprintf(`{"since":%q,"until":%q,"resources":["calls","call_metrics"],"span":0,"pass":0,"record":0}`,
		now.Add(-6*time.Hour).Format(time.RFC3339), now.Add(6*time.Hour).Format(time.RFC3339)))
	saved := saveRDB(t, b.rs)
	r = start(t, b.w, b.set, b.log, quickJobs) // finishes that backfill, then polls
	b.cursor(t, "backfill.done", 60*time.Second)
	r.advanceLive(t, 40) // announced after the copy: calls created, participants moved on
	r.stop(t)
	b.rs.Stop()
	if err := os.WriteFile(filepath.Join(b.rs.Dir(), "dump.rdb"), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	b.rs.Restart(t)
	if v, _, _ := b.store.GetCursor(t.Context(), "backfill.done"); v != "" {
		t.Fatal("Redis was not restored to the copy")
	}
	r = start(t, b.w, b.set, b.log, quickJobs) // resumes the backfill first
	b.cursor(t, "backfill.done", 60*time.Second)
	b.settle(t, r)
	if !strings.Contains(b.logs.String(), "Redis went back in time") {
		t.Error("the rollback went unnoticed")
	}
	b.audit(t, nil)
}

// advanceLive waits for n more calls cycles (the world's clock runs).
func (r *running) advanceLive(t *testing.T, n int) {
	t.Helper()
	base := r.cycles.snapshot()["calls"]
	simtest.WaitFor(t, 60*time.Second, "calls cycles", func() bool { return r.cycles.snapshot()["calls"] >= base+n })
}

// commitCursor sets a cursor through a fenced commit of a lease of its own.
func commitCursor(t *testing.T, store *cursor.Store, name, value string) {
	t.Helper()
	lease, err := store.Acquire(t.Context(), "test", 10*time.Second)
	if err == nil {
		_, err = store.Commit(t.Context(), lease, cursor.Batch{Cursors: map[string]string{name: value}})
	}
	if err == nil {
		err = store.Release(t.Context(), lease)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// httpGet returns the body of GET path on addr ("" on a transport error).
func httpGet(t *testing.T, addr, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// backfillRequest is a backfill of resources created within [since, until].
func backfillRequest(since, until time.Time, resources ...string) backfill.Request {
	return backfill.Request{Since: since.UTC().Truncate(time.Second), Until: until.UTC().Truncate(time.Second), Resources: resources}
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
