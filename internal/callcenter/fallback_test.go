package callcenter

import (
	"bytes"
	"strings"
	"testing"
	"time"

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
	clk.Advance(59 * time.Minute)
	read()
	if _, byTime, _ := api.stats(); byTime != 1 {
		t.Errorf("%d requests with by_time within the hour, want 1: still the fallback", byTime)
	}
	clk.Advance(time.Minute)
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

// An API that takes by_time[to] as inclusive returns a call created at the whole
// second To is sent rounded up to: within the window sent, so not a sign that the
// filter is ignored.
func TestCallsSinceToRoundedUpIsNotIgnored(t *testing.T) {
	api := newListAPI(50, "newest")
	api.inclusiveTo = true
	var log bytes.Buffer
	cl := newTestClient(t, newServer(t, newFakeClock(), api.handle), WithLogger(zerolog.New(&log)))
	got := newCollect(t, 10)
	o := ListCallsOptions{ListOptions: ListOptions{PerPage: 10}, ByTime: TimeWindow{From: api.at(35), To: api.at(45).Add(-time.Second / 2)}}
	if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "ignores by_time") {
		t.Errorf("a call at the rounded-up To taken for by_time ignored:\n%s", log.String())
	}
	if _, ok := got.got[46]; !ok {
		t.Errorf("call 46 (record 45, at the rounded-up To) not handed: the API's window was not read")
	}
}

// A list that starts newest first and breaks on its second page is read to the
// end: the order it showed first no longer says where reading may stop.
func TestFallbackNewestFirstOrderBreaks(t *testing.T) {
	api := newListAPI(50, "newest")
	api.ignoreByTime = true
	api.reversed = 3 // page 2, the fallback's second request
	cl := newTestClient(t, newServer(t, newFakeClock(), api.handle))
	got := newCollect(t, 10)
	o := ListCallsOptions{ListOptions: ListOptions{PerPage: 10}, ByTime: TimeWindow{From: api.at(35), To: api.at(45)}}
	if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
		t.Fatal(err)
	}
	got.wantRange(35, 50)
	if requests, _, _ := api.stats(); requests != 1+5 {
		t.Errorf("%d requests, want every page read (1+5)", requests)
	}
}

// Read backwards, a page in order within itself that ends after the start of the
// page after it shows the list is not oldest first across pages: every page left
// is read, not just down to the first that starts before From (page 4 here;
// call 36 is on page 3).
func TestFallbackPagesOverlap(t *testing.T) {
	api := newListAPI(50, "custom")
	api.ignoreByTime = true
	var perm []int
	for _, r := range [][2]int{{0, 5}, {29, 34}, {5, 14}, {34, 35}, {20, 29}, {35, 36}, {14, 20}, {40, 44}, {36, 40}, {44, 50}} {
		for i := r[0]; i < r[1]; i++ {
			perm = append(perm, i)
		}
	}
	api.perm = perm // pages: 0-4 29-33 | 5-13 34 | 20-28 35 | 14-19 40-43 | 36-39 44-49
	cl := newTestClient(t, newServer(t, newFakeClock(), api.handle))
	got := newCollect(t, 10)
	o := ListCallsOptions{ListOptions: ListOptions{PerPage: 10}, ByTime: TimeWindow{From: api.at(35), To: api.at(45)}}
	if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
		t.Fatal(err)
	}
	got.wantRange(35, 50)
}

// A call without created_time tells nothing of where a list read without
// by_time may stop: newest first, the last call of a page, or oldest first,
// the first call of a page read backwards, undated, does not end the read
// before the window's calls are all read; the undated call is handed too.
func TestFallbackUndatedCallStopsNothing(t *testing.T) {
	for _, tc := range []struct {
		order   string
		undated int64 // newest first: the last of page 1; oldest first: the first of page 5
	}{{"newest", 41}, {"oldest", 41}} {
		t.Run(tc.order, func(t *testing.T) {
			api := newListAPI(50, tc.order)
			api.ignoreByTime = true
			api.undated = map[int64]bool{tc.undated: true}
			cl := newTestClient(t, newServer(t, newFakeClock(), api.handle))
			got := newCollect(t, 10)
			o := ListCallsOptions{ListOptions: ListOptions{PerPage: 10}, ByTime: TimeWindow{From: api.at(35), To: api.at(45)}}
			if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
				t.Fatal(err)
			}
			got.wantRange(35, 50)
		})
	}
}
