package poll

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/sim"
)

// Single reads decay: 1, 2, 4 … 32 minutes after the anchor, then hourly.
func TestReadSchedule(t *testing.T) {
	a := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	var got []time.Duration
	for at := a.Add(-time.Minute); len(got) < 9; {
		at = nextRead(a, at)
		got = append(got, at.Sub(a))
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour}
	if !slices.Equal(got, want) {
		t.Fatalf("reads at %v, want %v", got, want)
	}
	if due(a, a.Add(5*time.Minute), a.Add(7*time.Minute)) || !due(a, a.Add(5*time.Minute), a.Add(8*time.Minute)) || !due(a, time.Time{}, a) {
		t.Fatal("due: wrong around the read at 8 minutes")
	}
}

// What a calls cycle does with each open call created before its window.
func TestOpenActions(t *testing.T) {
	p := &Poller{cfg: Config{Intervals: everything, MetricsLookback: 2 * time.Hour}}
	p.cfg.defaults()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	p.reads.lastCalls = now.Add(-5 * time.Second)
	p.reads.missing = map[int64]int{7: maxMissing}
	ended := func(ago time.Duration) diff.CallState { return diff.CallState{Ended: true, EndedAt: now.Add(-ago)} }
	for _, tc := range []struct {
		name        string
		created     time.Duration // ago
		id          string
		st          diff.CallState
		metricFinal bool
		sweep       bool
		want        openAction
	}{
		{"open two days: given up", 49 * time.Hour, "1", diff.CallState{}, false, false, openGiveUp},
		{"404 three times: given up", 10 * time.Hour, "7", diff.CallState{}, false, false, openGiveUp},
		{"open, recent: window", time.Hour, "1", diff.CallState{}, false, false, openWiden},
		{"open, old, read not due", 10*time.Hour + 30*time.Minute, "1", diff.CallState{}, false, false, openKeep},
		{"open, old, read due", 6*time.Hour + 2*time.Minute, "1", diff.CallState{}, false, false, openRead},
		{"ended long ago, metric final: done", 5 * time.Hour, "1", ended(3 * time.Hour), true, false, openDone},
		{"ended long ago, metric pending: the metrics cycle's", 5 * time.Hour, "1", ended(3 * time.Hour), false, false, openKeep},
		{"ended recently, long call, sweep: window", 3 * time.Hour, "1", ended(10 * time.Minute), true, true, openWiden},
		{"ended recently, long call, no sweep", 3 * time.Hour, "1", ended(10 * time.Minute), true, false, openKeep},
		{"ended recently, very long call, read due", 9 * time.Hour, "1", ended(4 * time.Minute), true, false, openRead},
		{"ended recently, very long call, read not due", 9 * time.Hour, "1", ended(5 * time.Minute), true, false, openKeep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := cursor.Tracked{ID: tc.id, At: now.Add(-tc.created)}
			if got := p.openActionOf(o, tc.st, tc.metricFinal, tc.sweep, now); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// A change after the end of a call longer than the calls overlap (here a note
// written ten minutes after a call of over a minute, with a one-minute overlap) is
// announced: the call stays watched for MetricsLookback after its end.
func TestLateChangeOfALongCall(t *testing.T) {
	var target int64
	late := false
	h := &hostile{edit: func(c map[string]any) {
		if late && callID(c) == target {
			c["call_notes"] = "called back"
			shift(c, "updated_time", 10*time.Minute)
		}
	}}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 2}, everything, h.wrap)
	p.cfg.CallsOverlap = time.Minute
	id, err := s.ScriptAnsweredCall()
	if err != nil {
		t.Fatal(err)
	}
	target = id
	stepWorld(t, p, s, 10)
	late = true
	stepWorld(t, p, s, 3)
	var notes []string
	for _, e := range outboxEvents(t, store) {
		if e.Type != events.CallUpdated || e.Subject != "calls/"+itoa(int(id)) {
			continue
		}
		var d events.CallUpdatedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Changes {
			if c.Field == "call_notes" {
				notes = append(notes, string(c.Current))
			}
		}
	}
	if !slices.Contains(notes, `"called back"`) {
		t.Fatalf("notes changes of call %d: %v; want the late note", id, notes)
	}
}

// Ten open calls the API has lost (404) cost a read each, then a read an hour,
// and are given up after three 404s in a row; meanwhile a calls cycle costs one
// request, so they stretch no interval.
func TestLostOpenCallsCostLittle(t *testing.T) {
	h := &hostile{}
	p, store, s := newPollerVia(t, sim.Config{Agents: 8, CallRate: 0.5, Backlog: 10}, everything, h.wrap)
	var b cursor.Batch
	for i := range 10 {
		b.Open = append(b.Open, cursor.Tracked{ID: itoa(900 + i), At: s.Now().Add(-10 * time.Hour)})
	}
	if _, err := store.Commit(t.Context(), p.lease(), b); err != nil {
		t.Fatal(err)
	}
	pollAll(t, p)
	for range 30 { // five hours
		s.Advance(10 * time.Minute)
		before := p.api.Usage().Requests
		if err := p.pollCalls(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := p.api.Usage().Requests - before; got > 1+10 {
			t.Errorf("a calls cycle cost %d requests", got)
		}
		pollAll(t, p)
	}
	done, err := store.TerminalCalls(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	gone := 0
	for _, d := range done {
		if d.ID >= "900" && d.ID <= "909" {
			gone++
		}
	}
	for i := range 10 {
		if n := h.singleReads(itoa(900 + i)); n != maxMissing {
			t.Errorf("call %d read %d times, want %d", 900+i, n, maxMissing)
		}
	}
	if gone != 10 {
		t.Errorf("%d of 10 lost calls given up", gone)
	}
}
