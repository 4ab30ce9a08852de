package poll

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/policy"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/redistest"
)

// policyWorld is a simulated account and a Redis store that pollers of
// different policies take turns on, as replicas of successive releases would.
type policyWorld struct {
	t     *testing.T
	sim   *sim.Sim
	url   string
	store *cursor.Store
	lease cursor.Lease
}

func newPolicyWorld(t *testing.T) *policyWorld {
	s, err := sim.New(sim.Config{Agents: 6, CallRate: 4, Backlog: 30, Seed: 5, APIKey: "k",
		Clock: sim.NewManualClock(time.Now().UTC().Truncate(time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	store, err := cursor.New(redistest.Start(t).Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	lease, err := store.Acquire(t.Context(), "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return &policyWorld{t: t, sim: s, url: srv.URL, store: store, lease: lease}
}

// poller starts a term under pol: its epoch and policy check, as Run does.
func (w *policyWorld) poller(pol *policy.Policy) *Poller {
	w.t.Helper()
	var opts []callcenter.Option
	if pol != nil {
		opts = append(opts, callcenter.WithRedactor(pol))
	}
	api, err := callcenter.New(w.url, secret.New("k"), opts...)
	if err != nil {
		w.t.Fatal(err)
	}
	p, err := New(Config{Account: "acme", Prefix: "callcenter", Intervals: everything, Backfill: 24 * time.Hour,
		MetricsLookback: 2 * time.Hour, Policy: pol}, api, w.store, zerolog.Nop())
	if err != nil {
		w.t.Fatal(err)
	}
	p.lease = func() cursor.Lease { return w.lease }
	if err := p.loadEpoch(w.t.Context()); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// cycles runs one cycle of every resource, ending each as Run does.
func (w *policyWorld) cycles(p *Poller) {
	w.t.Helper()
	for _, res := range p.resourcesByPriority() {
		if err := p.cycle(w.t.Context(), res); err != nil {
			w.t.Fatalf("%s: %v", res, err)
		}
	}
}

// outbox returns the outbox's entries after the first n.
func (w *policyWorld) outbox(n int) []events.Envelope {
	w.t.Helper()
	recs, err := w.store.ReadOutbox(w.t.Context(), "", 100000)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []events.Envelope
	for _, r := range recs[n:] {
		var e events.Envelope
		if err := json.Unmarshal(r.Data, &e); err != nil {
			w.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// snapshotsFree fails when a call or user snapshot holds one of values.
func (w *policyWorld) snapshotsFree(values []string, step int) {
	w.t.Helper()
	for _, kind := range []string{kindCall, kindUser} {
		for s, err := range w.store.AllSnapshots(w.t.Context(), kind) {
			if err != nil {
				w.t.Fatal(err)
			}
			for _, v := range values {
				if strings.Contains(string(s.Data), v) {
					w.t.Fatalf("step %d: %s snapshot %s holds %q", step, kind, s.ID, v)
				}
			}
		}
	}
}

func noPersonalData(t *testing.T, key string) *policy.Policy {
	t.Helper()
	p, err := policy.New(policy.Rules{Preset: policy.PresetNoPersonalData}, secret.New(key), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// personal collects the users' names, emails and phones from raw user events.
func personal(evs []events.Envelope) []string {
	var out []string
	for _, e := range evs {
		var d events.UserData
		if e.Type == events.UserCreated && json.Unmarshal(e.Data, &d) == nil {
			for _, v := range []string{d.User.Name, d.User.Email, d.User.Phone} {
				if len(v) >= 5 {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// A policy change of a running account re-baselines silently: no event is
// only the new form of a field (hashed where it was raw, or under a rotated
// key); the events after carry the policy's version and none of the raw values.
func TestPolicyChangeRebaselinesSilently(t *testing.T) {
	w := newPolicyWorld(t)
	raw := w.poller(nil)
	for range 10 {
		w.sim.Advance(time.Minute)
		w.cycles(raw)
	}
	before := w.outbox(0)
	values := personal(before)
	if len(values) == 0 {
		t.Fatal("the world has no personal values to look for")
	}
	cur, _ := w.store.Cursors(t.Context())
	if cur[cursorPolicy] != policyKeep {
		t.Fatalf("cursor %s = %q, want %q on a fresh state without policy", cursorPolicy, cur[cursorPolicy], policyKeep)
	}

	for step, key := range []string{"first-key-0123456789", "rotated-key-0123456789"} {
		pol := noPersonalData(t, key)
		n := len(w.outbox(0))
		p := w.poller(pol) // re-baselines as the term starts
		w.cycles(p)        // the world stands still: every change seen is the policy's
		if got := w.outbox(n); len(got) != 0 {
			t.Fatalf("step %d: %d events of a world standing still, e.g. %s %s: a storm of hashing", step, len(got), got[0].Type, got[0].Data)
		}
		cur, _ := w.store.Cursors(t.Context())
		if cur[cursorPolicy] != pol.Version() {
			t.Fatalf("step %d: cursor %q after the re-baseline, want %q", step, cur[cursorPolicy], pol.Version())
		}
		w.snapshotsFree(values, step)
		for range 5 {
			w.sim.Advance(time.Minute)
			w.cycles(p)
		}
		after := w.outbox(n)
		if len(after) == 0 {
			t.Fatalf("step %d: no event after the re-baseline", step)
		}
		for _, e := range after {
			if e.Policy != pol.Version() {
				t.Fatalf("step %d: %s carries policy %q, want %q", step, e.Type, e.Policy, pol.Version())
			}
			for _, v := range values {
				if strings.Contains(string(e.Data), v) {
					t.Fatalf("step %d: %s holds %q", step, e.Type, v)
				}
			}
		}
	}
}

// The account gets only the event types it wants; the snapshots move on all
// the same, so that a type wanted later is not a flood of old changes.
func TestPolicyEventTypes(t *testing.T) {
	w := newPolicyWorld(t)
	pol, err := policy.New(policy.Rules{Events: []string{"call.*", "metric.finalized"}}, secret.Value{}, "acme")
	if err != nil {
		t.Fatal(err)
	}
	p := w.poller(pol)
	for range 15 {
		w.sim.Advance(time.Minute)
		w.cycles(p)
	}
	got := map[events.Type]int{}
	for _, e := range w.outbox(0) {
		got[e.Type]++
	}
	if got[events.CallCreated] == 0 || got[events.MetricFinalized] == 0 {
		t.Errorf("events %v: call.* and metric.finalized wanted", got)
	}
	for typ := range got {
		if !pol.Wants(typ) {
			t.Errorf("events %v: %s is not wanted", got, typ)
		}
	}
	if n, _ := w.store.SnapshotCount(t.Context(), kindUser); n == 0 {
		t.Error("users unwanted as events are not tracked: wanting them later would announce every one")
	}
}
