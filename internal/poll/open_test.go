package poll

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/rs/zerolog"
)

// newTestPoller is a poller over a frozen simulator and a real Redis, holding the
// lease, for driving single cycles.
func newTestPoller(t *testing.T) (*Poller, *cursor.Store, *sim.Sim) {
	t.Helper()
	return newPollerOf(t, sim.Config{Agents: 5}, map[string]time.Duration{ResCalls: time.Second, ResMetrics: time.Second})
}

// newPollerOf is newTestPoller over a simulator configured by cfg (its clock a
// manual one at the wall clock's second, seed 3 unless set), polling intervals.
func newPollerOf(t *testing.T, cfg sim.Config, intervals map[string]time.Duration, opts ...Option) (*Poller, *cursor.Store, *sim.Sim) {
	t.Helper()
	return newPollerVia(t, cfg, intervals, nil, opts...)
}

// newPollerVia is newPollerOf with the simulator's API behind wrap (nil: none),
// for an upstream that misbehaves.
func newPollerVia(t *testing.T, cfg sim.Config, intervals map[string]time.Duration, wrap func(http.Handler) http.Handler, opts ...Option) (*Poller, *cursor.Store, *sim.Sim) {
	t.Helper()
	store, err := cursor.New(redistest.Start(t).Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	p, s := newPollerOn(t, store, cfg, intervals, wrap, opts...)
	return p, store, s
}

// newPollerOn is newPollerVia on a given store.
func newPollerOn(t *testing.T, store *cursor.Store, cfg sim.Config, intervals map[string]time.Duration, wrap func(http.Handler) http.Handler, opts ...Option) (*Poller, *sim.Sim) {
	t.Helper()
	cfg.Clock, cfg.APIKey = sim.NewManualClock(time.Now().UTC().Truncate(time.Second)), "k"
	if cfg.Seed == 0 {
		cfg.Seed = 3
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	api, err := callcenter.New(srv.URL, secret.New("k"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Account: "acme", Prefix: "callcenter", Intervals: intervals,
		Backfill: 24 * time.Hour, MetricsLookback: 2 * time.Hour}, api, store, zerolog.Nop(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := store.Acquire(t.Context(), "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p.lease = func() cursor.Lease { return lease }
	if err := p.loadEpoch(t.Context()); err != nil {
		t.Fatal(err)
	}
	return p, s
}

// A call the API never shows ending is given up 48 hours after it began: it leaves
// the open set, so it no longer holds list windows open or costs single reads.
func TestOpenCallGivenUp(t *testing.T) {
	p, store, _ := newTestPoller(t)
	now := time.Now().UTC()
	if _, err := store.Commit(t.Context(), p.lease(), cursor.Batch{Open: []cursor.Tracked{
		{ID: "41", At: now.Add(-49 * time.Hour)}, // stuck: given up
		{ID: "42", At: now.Add(-time.Hour)},      // recent: kept
	}}); err != nil {
		t.Fatal(err)
	}
	if err := p.pollCalls(t.Context()); err != nil {
		t.Fatal(err)
	}
	open, err := store.OpenCalls(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, o := range open {
		ids[o.ID] = true
	}
	if ids["41"] || !ids["42"] {
		t.Fatalf("open calls after a cycle: %v; want 41 given up and 42 kept", open)
	}
	done, err := store.TerminalCalls(t.Context(), 0)
	if err != nil || len(done) != 1 || done[0].ID != "41" {
		t.Fatalf("finished calls %v (%v), want 41", done, err)
	}
}

// Old open calls are read one by one when they are few, and pull the list window
// back to them when they are many (one page of up to 1000 calls costs what one
// single read does).
func TestOldOpenCallsCost(t *testing.T) {
	for _, tc := range []struct {
		old      int
		requests uint64
	}{{3, 1 + 3}, {12, 1}} {
		p, store, _ := newTestPoller(t)
		now := time.Now().UTC()
		// Not the first start: the window begins 30 minutes before the newest call.
		b := cursor.Batch{Cursors: map[string]string{cursorHighWater: now.Format(time.RFC3339Nano)}}
		for i := range tc.old {
			b.Open = append(b.Open, cursor.Tracked{ID: itoa(100 + i), At: now.Add(-10*time.Hour - time.Duration(i)*time.Minute)})
		}
		if _, err := store.Commit(t.Context(), p.lease(), b); err != nil {
			t.Fatal(err)
		}
		before := p.api.Usage().Requests
		if err := p.pollCalls(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := p.api.Usage().Requests - before; got != tc.requests {
			t.Errorf("%d old open calls: %d requests, want %d", tc.old, got, tc.requests)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// Metrics of old ended calls are read one by one when they are few, and pull the
// metrics window back to them when they are many; a call ended within MaxWindow is
// covered by the window at no extra cost; calls not ended yet cost nothing (there
// is no metric to finalize), nor do they stretch the window.
func TestOldOpenMetricsCost(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old      int
		recent   bool
		ended    bool
		requests uint64
	}{
		{"a few old", 3, false, true, 1 + 3},
		{"many old", 12, false, true, 1},
		{"one within MaxWindow", 0, true, true, 1},
		{"a few old, not ended", 3, true, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, store, _ := newTestPoller(t)
			now := time.Now().UTC()
			var b cursor.Batch
			track := func(id string, created time.Time) {
				b.Open = append(b.Open, cursor.Tracked{ID: id, At: created})
				if tc.ended {
					b.Snapshots = append(b.Snapshots, cursor.Snapshot{Kind: kindCall, ID: id, Data: endedCall(t, id, created, now.Add(-time.Minute))})
				}
			}
			for i := range tc.old {
				track(itoa(100+i), now.Add(-10*time.Hour-time.Duration(i)*time.Minute))
			}
			if tc.recent {
				track("99", now.Add(-4*time.Hour))
			}
			if _, err := store.Commit(t.Context(), p.lease(), b); err != nil {
				t.Fatal(err)
			}
			before := p.api.Usage().Requests
			if err := p.pollMetrics(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := p.api.Usage().Requests - before; got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
		})
	}
}

// endedCall is the snapshot of call id, created at created and ended at ended.
func endedCall(t *testing.T, id string, created, ended time.Time) []byte {
	t.Helper()
	c := events.Call{ID: mustID(id), CreatedTime: created, UpdatedTime: ended,
		Participants: []events.Participant{{ID: 1, CallID: mustID(id), CallStatus: 1, CreatedTime: created, UpdatedTime: ended}}}
	r, err := diff.Call(diff.Scope{Account: "acme"}, nil, c, ended)
	if err != nil {
		t.Fatal(err)
	}
	return r.Snap
}
