package callcenter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// The fallback for a /calls that ignores by_time, in every list order: it hands
// on the calls created at or after From, each once with its last copy read, and
// stops early where the order allows.
func TestCallsSinceFallback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		order    string
		dup      bool
		noMeta   bool
		shuffles int
		requests int // 0: not checked
		partial  bool
	}{
		// 50 calls, 10 a page, From at the 36th, To at the 46th (the first page
		// shows the API ignores by_time whatever the order): the by_time attempt,
		// then…
		{name: "newest first", order: "newest", requests: 1 + 2}, // pages 1, 2
		{name: "newest first, moving list", order: "newest", dup: true, requests: 1 + 2},
		{name: "newest first, no meta", order: "newest", noMeta: true, requests: 1 + 2},
		{name: "oldest first", order: "oldest", requests: 1 + 3}, // pages 1, 5, 4
		{name: "oldest first, moving list", order: "oldest", dup: true, requests: 1 + 3},
		{name: "oldest first, no meta", order: "oldest", noMeta: true, requests: 1 + 6}, // pages 1…6
		{name: "random, stable", order: "random", requests: 1 + 5},
		{name: "random, no meta", order: "random", noMeta: true, requests: 1 + 6},
		{name: "random, moving list", order: "random", dup: true, requests: 1 + 5},
		// The attempt and the first pass see a fresh order each: a second pass.
		{name: "random, reshuffled during the first pass", order: "random", shuffles: 6, requests: 1 + 5 + 5},
		// Best effort: three passes at most.
		{name: "random, reshuffled on every request", order: "random", shuffles: -1, requests: 1 + 15, partial: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newListAPI(50, tc.order)
			api.ignoreByTime, api.dup, api.noMeta, api.shuffles = true, tc.dup, tc.noMeta, tc.shuffles
			var log bytes.Buffer
			cl := newTestClient(t, newServer(t, newFakeClock(), api.handle), WithLogger(zerolog.New(&log)))
			got := newCollect(t, 10)
			o := ListCallsOptions{ListOptions: ListOptions{PerPage: 10}, ByTime: TimeWindow{From: api.at(35), To: api.at(45)}}
			if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
				t.Fatal(err)
			}
			requests, _, served := api.stats()
			if tc.partial {
				for id := range got.got {
					if id < 36 {
						t.Errorf("call %d, created before From, handed", id)
					}
				}
			} else {
				got.wantRange(35, 50)
			}
			for id, c := range got.got {
				if upd := c.UpdatedTime.Sub(w0).Seconds(); upd != served[id] {
					t.Errorf("call %d handed as served at request %v; the last copy was served at %v", id, upd, served[id])
				}
			}
			if tc.requests != 0 && requests != tc.requests {
				t.Errorf("%d requests, want %d", requests, tc.requests)
			}
			if n := strings.Count(log.String(), "ignores by_time"); n != 1 {
				t.Errorf("%d warnings, want 1:\n%s", n, log.String())
			}
		})
	}
}

// Once /calls was seen ignoring by_time, reads skip the filter for an hour, then
// try it again.
func TestCallsSinceRemembersTheFallback(t *testing.T) {
	api := newListAPI(50, "newest")
	api.ignoreByTime = true
	var log bytes.Buffer
	clk := newFakeClock()
	cl := newTestClient(t, newServer(t, clk, api.handle), WithLogger(zerolog.New(&log)))
	read := func() {
		t.Helper()
		got := newCollect(t, 10)
		o := ListCallsOptions{ListOptions: ListOptions{PerPage: 10}, ByTime: TimeWindow{From: api.at(35), To: api.at(45)}}
		if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
			t.Fatal(err)
		}
		got.wantRange(35, 50)
	}
	read()
	read()
	if _, byTime, _ := api.stats(); byTime != 1 {
		t.Errorf("%d requests with by_time in two reads, want 1: the second goes straight to the fallback", byTime)
	}
	clk.Advance(byTimeRetry)
	read()
	if _, byTime, _ := api.stats(); byTime != 2 {
		t.Errorf("%d requests with by_time after an hour, want 2: the filter is tried again", byTime)
	}
	if n := strings.Count(log.String(), "ignores by_time"); n != 2 {
		t.Errorf("%d warnings, want one per detection (2)", n)
	}
}

// A list whose order breaks while read backwards is read to the end.
func TestFallbackOrderBreaks(t *testing.T) {
	api := newListAPI(50, "oldest")
	api.ignoreByTime = true
	api.reversed = 3 // the last page, the fallback's second request
	cl := newTestClient(t, newServer(t, newFakeClock(), api.handle))
	got := newCollect(t, 10)
	o := ListCallsOptions{ListOptions: ListOptions{PerPage: 10}, ByTime: TimeWindow{From: api.at(45), To: api.at(50)}}
	if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
		t.Fatal(err)
	}
	got.wantRange(45, 50)
	if requests, _, _ := api.stats(); requests != 1+5 {
		t.Errorf("%d requests, want every page read (1+5)", requests)
	}
}
