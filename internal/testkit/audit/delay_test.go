package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

func TestDelays(t *testing.T) {
	s := cleanStream(t)
	// Neither an undecodable body nor data not of its type is explained by the truth.
	s.msgs = append(s.msgs, Message{Seq: 11, DecodeErr: errors.New("bad json")})
	for _, typ := range []events.Type{events.CallCreated, events.MetricFinalized, events.ParticipantStatusChanged, events.UserStatusChanged} {
		m := s.msgs[0]
		m.Event.Type, m.Event.Data = typ, json.RawMessage(`[]`)
		s.msgs = append(s.msgs, m)
	}
	truth := readTruth(t, cleanTruthLog())
	var shifted []time.Time
	got := Delays(s.msgs, truth, func(at time.Time) time.Time {
		shifted = append(shifted, at)
		return at.Add(-time.Second) // the world ran a second ahead of the wall clock
	})
	want := map[events.Type][]time.Duration{
		events.CallCreated: {3 * time.Second}, // created at 10:00:01, published at 10:00:03
		// 13 → 8 and 8 → 1 each published when they happened.
		events.ParticipantStatusChanged: {time.Second, time.Second},
		events.CallEnded:                {time.Second},
		events.MetricFinalized:          {time.Second},
		// 1 → 2 happened at 10:00:03, published at 10:00:06; the return to 1
		// (through a missed 3) at 10:00:11, published at 10:00:10 on the world's
		// clock: at once.
		events.UserStatusChanged: {4 * time.Second, 0},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Delays = %v, want %v", got, want)
	}
	if len(shifted) == 0 {
		t.Error("Delays did not map simulated times through toReal")
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0, time.Second}, {50, 5 * time.Second}, {90, 9 * time.Second}, {99, 10 * time.Second}, {100, 10 * time.Second}} {
		if got := Percentile(ds, tc.p); got != tc.want {
			t.Errorf("Percentile(1..10 s, %g) = %s, want %s", tc.p, got, tc.want)
		}
	}
	if ds[0] != 10*time.Second {
		t.Error("Percentile sorted its argument in place")
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(none) = %s, want 0", got)
	}
}

func TestReadTruthErrors(t *testing.T) {
	for _, tc := range []struct{ name, log, want string }{
		{"not JSON", "{\n", "truth line 1: "},
		{"unknown field", `{"time":"2026-11-21T10:00:00Z","entity":"call","id":1,"change":"created","color":"red"}`, `truth line 1: json: unknown field "color"`},
		{"participant status not a number", `{"time":"2026-11-21T10:00:00Z","entity":"participant","id":1,"call_id":1,"change":"joined","to":"x"}`, `truth line 1: status "x": `},
		{"user status not a number", "\n" + `{"time":"2026-11-21T10:00:00Z","entity":"user","id":1,"change":"status_changed","field":"status","to":"x"}`, `truth line 2: status "x": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTruth(strings.NewReader(tc.log))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadTruth: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestReadTruth(t *testing.T) {
	truth := readTruth(t, cleanTruthLog())
	if c := truth.Calls[1]; c == nil || !c.Created.Equal(t0.Add(time.Second)) || !c.Ended.Equal(t0.Add(8*time.Second)) || !c.Finalized.Equal(t0.Add(9*time.Second)) {
		t.Errorf("call 1 = %+v", truth.Calls[1])
	}
	if p := truth.Participants[11]; p == nil || p.CallID != 1 || !slices.Equal(p.Statuses, []int{13, 6, 8, 1}) {
		t.Errorf("participant 11 = %+v, want call 1, statuses 13 6 8 1 (not the duration change)", p)
	}
	if u := truth.Users[5]; !maps.Equal(u, map[string]int{"status": 1}) {
		t.Errorf("user 5 = %v", u)
	}
	if !truth.Last.Equal(t0.Add(11 * time.Second)) {
		t.Errorf("Last = %s", truth.Last)
	}
}

func TestCompareCounts(t *testing.T) {
	r := Check(cleanStream(t).msgs, "callcenter")
	r.CompareCounts(1, 1, 1)
	if !r.OK() {
		t.Fatalf("matching counts: %v", r.Problems)
	}
	for _, w := range [][3]int{{2, 1, 1}, {1, 0, 1}, {1, 1, 2}} {
		r := Check(cleanStream(t).msgs, "callcenter")
		r.CompareCounts(w[0], w[1], w[2])
		want := fmt.Sprintf("stream has 1 calls created, 1 ended, 1 metrics finalized; the world %d, %d, %d", w[0], w[1], w[2])
		if len(r.Problems) != 1 || r.Problems[0] != want {
			t.Errorf("got %q, want %q", r.Problems, want)
		}
	}
}

// A status the world reached more than once: the delay runs from the latest
// change to the value published no later than its publication, neither an
// earlier visit, nor a later one, nor a change to another value; a user change of
// several fields counts from the latest of them. A message whose body failed to
// decode counts for nothing, even when part of it decoded.
func TestDelaysPicksTheLatestMatchingChange(t *testing.T) {
	l := &truthLog{}
	l.line(`"entity":"call","id":2,"change":"created"`)
	l.line(`"entity":"participant","id":21,"call_id":2,"change":"joined","to":1`)
	for _, to := range []int{2, 1, 2} {
		l.line(`"entity":"participant","id":21,"call_id":2,"change":"status_changed","field":"call_status","to":%d`, to)
	}
	l.line(`"entity":"team","id":9,"change":"created"`)
	l.line(`"entity":"user","id":6,"change":"status_changed","field":"status","from":1,"to":2`)
	l.line(`"entity":"user","id":6,"change":"status_changed","field":"preference","from":0,"to":1`)
	l.line(`"entity":"participant","id":21,"call_id":2,"change":"status_changed","field":"call_status","to":1`)

	s := &stream{t: t}
	s.status(2, 21, 2, 1)
	s.add(events.UserStatusChanged, "users/6", "both", events.UserStatusData{
		User: events.User{ID: 6, Status: 2, Preference: 1}, Previous: events.UserState{Status: 1},
		Current: events.UserState{Status: 2, Preference: 1}, Changed: []string{"status", "preference"},
	})
	s.msgs[0].Published = t0.Add(5 * time.Second) // 1 reached at 1 s and 3 s, again at 8 s
	s.msgs[1].Published = t0.Add(9 * time.Second) // status at 6 s, preference at 7 s
	broken := s.msgs[0]
	broken.DecodeErr = errors.New("json: cannot unmarshal number into Go struct field")
	s.msgs = append(s.msgs, broken)

	got := Delays(s.msgs, readTruth(t, l), func(at time.Time) time.Time { return at })
	want := map[events.Type][]time.Duration{
		events.ParticipantStatusChanged: {2 * time.Second},
		events.UserStatusChanged:        {2 * time.Second},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Delays = %v, want %v", got, want)
	}
}
