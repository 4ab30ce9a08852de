package poll

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
)

// hostile wraps the simulator's API: each call object it serves (in /calls lists
// and GET /calls/{id}) goes through edit as decoded JSON, and it records whether a
// /calls list was ever read without by_time.
type hostile struct {
	edit    func(call map[string]any) // nil: calls served as they are
	mu      sync.Mutex
	full    int            // /calls list requests without by_time
	singles map[string]int // GET /calls/{id} requests by id
}

func (h *hostile) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		list := r.URL.Path == "/api/v1/calls"
		single := strings.HasPrefix(r.URL.Path, "/api/v1/calls/") && strings.Count(r.URL.Path, "/") == 4
		h.count(r, list, single)
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK && (list || single) && h.edit != nil {
			body = h.rewrite(body, list)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

func (h *hostile) count(r *http.Request, list, single bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case list && r.URL.Query().Get("by_time[from]") == "":
		h.full++
	case single:
		if h.singles == nil {
			h.singles = map[string]int{}
		}
		h.singles[strings.TrimPrefix(r.URL.Path, "/api/v1/calls/")]++
	}
}

func (h *hostile) rewrite(body []byte, list bool) []byte {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return body // a truncated body (fault): left as it is
	}
	if !list {
		h.edit(v)
	} else if calls, ok := v["calls"].([]any); ok {
		for _, c := range calls {
			if m, ok := c.(map[string]any); ok {
				h.edit(m)
			}
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

func (h *hostile) singleReads(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.singles[id]
}

func (h *hostile) fullReads() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.full
}

// callID is the id of a call object as JSON decodes it.
func callID(c map[string]any) int64 {
	id, _ := c["id"].(json.Number).Int64()
	return id
}

// shift moves the RFC 3339 time at m[key] by d.
func shift(m map[string]any, key string, d time.Duration) {
	s, _ := m[key].(string)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		m[key] = t.Add(d).UTC().Format(time.RFC3339)
	}
}

// stepWorld advances the simulator a minute and polls every resource, n times.
func stepWorld(t *testing.T, p *Poller, s *sim.Sim, n int) {
	t.Helper()
	for range n {
		s.Advance(time.Minute)
		pollAll(t, p)
	}
}

// outboxEvents decodes every event of the outbox.
func outboxEvents(t *testing.T, store *cursor.Store) []events.Envelope {
	t.Helper()
	recs, err := store.ReadOutbox(t.Context(), "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]events.Envelope, 0, len(recs))
	for _, r := range recs {
		var e events.Envelope
		if err := json.Unmarshal(r.Data, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// One call dated three days ahead moves nothing of the poller's: its clock, high
// water, prune horizon and windows stay with the world, no open call is given up,
// every call created afterwards is announced, and /calls keeps its by_time.
func TestFutureCallMovesNothing(t *testing.T) {
	const ahead = 72 * time.Hour
	var liar int64
	h := &hostile{edit: func(c map[string]any) {
		if liar == 0 {
			liar = callID(c)
		}
		if callID(c) == liar {
			shift(c, "created_time", ahead)
			shift(c, "updated_time", ahead)
		}
	}}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 20}, everything, h.wrap)
	stepWorld(t, p, s, 20)
	pollAll(t, p)
	if now := p.now(); now.After(s.Now().Add(time.Minute)) {
		t.Errorf("poller clock %s, world %s: a lying record moved it", now, s.Now())
	}
	cur, err := store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{cursorHighWater, cursorPruned} {
		if at := parseTime(cur[name]); at.After(s.Now()) {
			t.Errorf("cursor %s at %s, after the world's present %s", name, at, s.Now())
		}
	}
	got, st := outboxTypes(t, store), s.Stats()
	if got["call.created"] != st.Calls || got["call.ended"] != st.CallsEnded {
		t.Errorf("events %v; the world %+v", got, st)
	}
	if n := h.fullReads(); n != 0 {
		t.Errorf("%d reads of /calls without by_time, want none", n)
	}
	if end := p.windowEnd(); end.After(s.Now().Add(maxAhead + time.Minute)) {
		t.Errorf("window end %s, world %s", end, s.Now())
	}
}

// Participants without updated_time end their call once, dated by the call (or,
// for the calls without one either, by the read), and /calls keeps its by_time.
func TestNullParticipantTimesEndOnce(t *testing.T) {
	h := &hostile{edit: func(c map[string]any) {
		if callID(c)%3 == 0 {
			c["updated_time"] = nil
		}
		parts, _ := c["participants"].([]any)
		for _, pt := range parts {
			if m, ok := pt.(map[string]any); ok {
				m["updated_time"] = nil
			}
		}
	}}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 20}, everything, h.wrap)
	stepWorld(t, p, s, 15)
	pollAll(t, p)
	ended := map[string]int{}
	for _, e := range outboxEvents(t, store) {
		if e.Time.Year() < 2000 {
			t.Errorf("%s %s dated %s", e.Type, e.Subject, e.Time)
		}
		if e.Type == events.CallEnded {
			ended[e.Subject]++
		}
	}
	if st := s.Stats(); len(ended) != st.CallsEnded {
		t.Errorf("%d calls ended, the world %d", len(ended), st.CallsEnded)
	}
	for sub, n := range ended {
		if n != 1 {
			t.Errorf("%s: %d call.ended", sub, n)
		}
	}
	if n := h.fullReads(); n != 0 {
		t.Errorf("%d reads of /calls without by_time, want none", n)
	}
}

// The poller's clock follows a simulator running days ahead of the wall clock (many
// calls agree), so its windows keep up with the world.
func TestClockFollowsAFastWorld(t *testing.T) {
	p, store, s := newPollerOf(t, sim.Config{Agents: 8, CallRate: 0.05}, everything)
	for range 6 {
		s.Advance(12 * time.Hour)
		pollAll(t, p)
	}
	pollAll(t, p)
	if now := p.now(); now.Before(s.Now().Add(-2 * time.Hour)) {
		t.Errorf("poller clock %s, world %s: it should follow", now, s.Now())
	}
	if got, st := outboxTypes(t, store), s.Stats(); got["call.created"] != st.Calls || got["call.ended"] != st.CallsEnded {
		t.Errorf("events %v; the world %+v", got, st)
	}
}

// The poller's present is the time several calls reached: one call, however far
// ahead, moves nothing; beyond maxAhead, nothing does.
func TestAPIClock(t *testing.T) {
	wall := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		saw  []witness
		want time.Time
	}{
		{"too few witnesses", []witness{{1, wall.Add(time.Hour)}, {2, wall.Add(time.Hour)}}, time.Time{}},
		{"one call seen often", []witness{{1, wall.Add(time.Hour)}, {1, wall.Add(2 * time.Hour)}, {1, wall.Add(3 * time.Hour)}}, time.Time{}},
		{"three agree", []witness{{1, wall.Add(time.Hour)}, {2, wall.Add(2 * time.Hour)}, {3, wall.Add(3 * time.Hour)}}, wall.Add(time.Hour)},
		{"one liar among many", []witness{{1, wall.Add(72 * time.Hour)}, {2, wall.Add(time.Minute)}, {3, wall.Add(2 * time.Minute)}, {4, wall.Add(3 * time.Minute)}}, wall.Add(2 * time.Minute)},
		{"beyond maxAhead", []witness{{1, wall.Add(maxAhead)}, {2, wall.Add(maxAhead + time.Hour)}, {3, wall.Add(9 * maxAhead)}}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c apiClock
			for _, w := range tc.saw {
				c.saw(w.call, w.at, wall)
			}
			if got := c.present(); !got.Equal(tc.want) {
				t.Fatalf("present %s, want %s", got, tc.want)
			}
		})
	}
}

// A bill_duration that ticks on every read while a call is live gives no
// call.updated: call.ended carries its final value.
func TestRunningBillDurationIsQuiet(t *testing.T) {
	ticks := map[int64]int64{}
	h := &hostile{edit: func(c map[string]any) {
		parts, _ := c["participants"].([]any)
		live := false
		for _, pt := range parts {
			m, _ := pt.(map[string]any)
			st, _ := m["call_status"].(json.Number).Int64()
			live = live || !events.CallStatusTerminal(int(st))
		}
		if live {
			ticks[callID(c)]++
		}
		c["bill_duration"] = ticks[callID(c)]
	}}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 4, Backlog: 10}, everything, h.wrap)
	stepWorld(t, p, s, 15)
	pollAll(t, p)
	got := outboxTypes(t, store)
	for _, e := range outboxEvents(t, store) {
		if e.Type != events.CallUpdated {
			continue
		}
		var d events.CallUpdatedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		for _, ch := range d.Changes {
			if ch.Field == "bill_duration" {
				t.Errorf("%s: bill_duration %s → %s announced", e.Subject, ch.Previous, ch.Current)
			}
		}
	}
	if got["call.ended"] == 0 {
		t.Fatalf("events %v: no call ended", got)
	}
}
