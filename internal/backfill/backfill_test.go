package backfill

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/rs/zerolog"
)

// env is a simulator with history, a store and a backfill over both.
type env struct {
	w     *simtest.World
	store *cursor.Store
	b     *Backfill
	lease cursor.Lease
}

func newEnv(t *testing.T, cfg sim.Config) *env {
	t.Helper()
	cfg.APIKey = "k"
	w := simtest.NewWorld(t, cfg)
	w.Run(t, 200) // export jobs take simulated seconds
	api, err := callcenter.New(w.URL, secret.New("k"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := cursor.New(redistest.Start(t).Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	p, err := poll.New(poll.Config{Account: "acme", Prefix: "callcenter",
		Intervals: map[string]time.Duration{poll.ResCalls: time.Second, poll.ResMetrics: time.Second},
		Backfill:  24 * time.Hour, MetricsLookback: 2 * time.Hour}, api, store, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	lease, err := store.Acquire(t.Context(), "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b := &Backfill{API: api, Store: store, Poller: p, Account: "acme", Dir: t.TempDir(), Log: zerolog.Nop(),
		Wait: callcenter.ExportWait{PollInterval: 20 * time.Millisecond, MaxPollInterval: 50 * time.Millisecond}}
	return &env{w: w, store: store, b: b, lease: lease}
}

func (e *env) run(t *testing.T, req Request) error {
	t.Helper()
	return e.b.Run(t.Context(), req, func() cursor.Lease { return e.lease })
}

// outbox returns the events committed so far, by type.
// commitProgress commits cursors as a backfill's progress (a run killed, or an
// earlier release's).
func (e *env) commitProgress(t *testing.T, cursors map[string]string) {
	t.Helper()
	h, err := e.b.Poller.History(t.Context(), func() cursor.Lease { return e.lease })
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(cursors); err != nil {
		t.Fatal(err)
	}
}

func (e *env) outbox(t *testing.T) []events.Envelope {
	t.Helper()
	recs, err := e.store.ReadOutbox(t.Context(), "0-0", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]events.Envelope, len(recs))
	for i, r := range recs {
		if err := json.Unmarshal(r.Data, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestBackfillHistory: every history call in the range is announced with its
// participants, end and final metric, marked as history, once: a second run of
// the same range (a new request) announces nothing again.
func TestBackfillHistory(t *testing.T) {
	for _, zipped := range []bool{false, true} {
		e := newEnv(t, sim.Config{Seed: 5, History: 800, HistorySpan: 30 * 24 * time.Hour, Backlog: 20, ZipReports: zipped})
		now := e.w.Sim.Start()
		req := Request{Since: now.AddDate(0, -2, 0), Until: now, Resources: []string{"calls", "call_metrics", "users", "teams"}}
		if err := e.run(t, req); err != nil {
			t.Fatal(err)
		}
		evs := e.outbox(t)
		count := map[events.Type]int{}
		for _, ev := range evs {
			count[ev.Type]++
			if !ev.History {
				t.Fatalf("%s %s without the history attribute", ev.Type, ev.Subject)
			}
		}
		if count[events.CallCreated] != 820 || count[events.CallEnded] != 820 || count[events.MetricFinalized] != 820 ||
			count[events.UserCreated] == 0 || count[events.TeamCreated] == 0 {
			t.Fatalf("zip %v: events %v", zipped, count)
		}
		// Users change meanwhile: read calls and metrics only.
		req.Until, req.Resources = req.Until.Add(time.Second), []string{"calls", "call_metrics"}
		if err := e.run(t, req); err != nil {
			t.Fatal(err)
		}
		if n := len(e.outbox(t)); n != len(evs) {
			t.Errorf("a second backfill of the same history added %d events", n-len(evs))
		}
	}
}

// TestBackfillRefusesAnother: the progress of another request must be finished
// first.
func TestBackfillRefusesAnother(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 5, History: 10})
	now := e.w.Sim.Start()
	cp := newCheckpoint(Request{Since: now.AddDate(0, -1, 0), Until: now, Resources: []string{"calls"}}, now, "")
	e.commitProgress(t, cp.cursors())
	err := e.run(t, Request{Since: now.AddDate(0, -2, 0), Until: now, Resources: []string{"calls"}})
	if err == nil || !strings.Contains(err.Error(), "another backfill") {
		t.Fatalf("got %v, want a refusal", err)
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// TestBackfillSpansAhead: a range of seven export spans (the ramp's five, then
// two years, then the rest), each span's job and report made while the one
// before is published, announces every call and metric once, and leaves no
// report behind, nor one a killed run left.
func TestBackfillSpansAhead(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 7, History: 600, HistorySpan: 5 * 365 * 24 * time.Hour})
	var logs strings.Builder
	e.b.Log = zerolog.New(&logs)
	stale := reportFile(e.b.Dir, "acme", 999)
	if err := os.WriteFile(stale, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := e.w.Sim.Start()
	req := Request{Since: now.AddDate(-5, 0, -7), Until: now, Resources: []string{"calls", "call_metrics", "users"}}
	if n := len(req.spans(planLatest)); n != 7 {
		t.Fatalf("%d spans, want 7", n)
	}
	if err := e.run(t, req); err != nil {
		t.Fatal(err)
	}
	count := map[events.Type]int{}
	for _, ev := range e.outbox(t) {
		count[ev.Type]++
	}
	if count[events.CallCreated] != 600 || count[events.CallEnded] != 600 || count[events.MetricFinalized] != 600 || count[events.UserCreated] == 0 {
		t.Errorf("events %v, want 600 calls created, ended and finalized, and users", count)
	}
	cur, err := e.store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var done Checkpoint
	if err := json.Unmarshal([]byte(cur[poll.CursorBackfillDone]), &done); err != nil || done.Plan != planRamp || done.Jobs != 7 || done.Records < 1200 {
		t.Errorf("summary %+v (%v), want the ramp's 7 jobs and every record", done, err)
	}
	if strings.Contains(logs.String(), "made ahead failed") {
		t.Errorf("a span's job made ahead failed:\n%s", logs.String())
	}
	if left, _ := os.ReadDir(e.b.Dir); len(left) != 0 {
		t.Errorf("left in the report directory: %v", left)
	}
}
