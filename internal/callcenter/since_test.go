package callcenter

import (
	"github.com/callbus/callbus/events"
	"net/http"
	"testing"
	"time"
)

// collect gathers what a Since read hands on, failing on a call handed twice or a
// batch larger than a page (memory holds a page, not the window).
type collect struct {
	t    *testing.T
	per  int
	got  map[int64]events.Call
	hand int // batches handed
}

func newCollect(t *testing.T, per int) *collect {
	return &collect{t: t, per: per, got: map[int64]events.Call{}}
}

func (c *collect) each(page []events.Call) error {
	c.hand++
	if len(page) > c.per+1 {
		c.t.Errorf("a batch of %d calls, want a page (%d) at most", len(page), c.per)
	}
	for _, call := range page {
		if _, dup := c.got[call.ID]; dup {
			c.t.Errorf("call %d handed twice", call.ID)
		}
		c.got[call.ID] = call
	}
	return nil
}

// wantRange fails unless the calls handed are exactly records lo..hi-1.
func (c *collect) wantRange(lo, hi int) {
	c.t.Helper()
	if len(c.got) != hi-lo {
		c.t.Errorf("%d calls handed, want %d", len(c.got), hi-lo)
	}
	for i := lo; i < hi; i++ {
		if _, ok := c.got[int64(i+1)]; !ok {
			c.t.Errorf("call %d (record %d) missing", i+1, i)
			return
		}
	}
}

// The complete-window reader hands every call of the window once, whatever the
// order, with lists that move (repeating records across pages) or reshuffle.
func TestCallsSinceEveryOrder(t *testing.T) {
	type tc struct {
		name   string
		order  string
		dup    bool
		noMeta bool
		shuf   int
	}
	var cases []tc
	for _, order := range []string{"newest", "oldest", "random"} {
		cases = append(cases,
			tc{name: order, order: order},
			tc{name: order + ", moving list", order: order, dup: true},
			tc{name: order + ", no meta", order: order, noMeta: true})
	}
	cases = append(cases,
		tc{name: "random, reshuffled on every request", order: "random", shuf: -1},
		tc{name: "random, reshuffled on every request, no meta", order: "random", shuf: -1, noMeta: true},
		tc{name: "random, reshuffled, moving list", order: "random", shuf: -1, dup: true})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api := newListAPI(250, c.order)
			api.dup, api.noMeta, api.shuffles = c.dup, c.noMeta, c.shuf
			s := newServer(t, newFakeClock(), api.handle)
			cl := newTestClient(t, s)
			got := newCollect(t, 20)
			o := ListCallsOptions{ListOptions: ListOptions{PerPage: 20}, ByTime: TimeWindow{From: api.at(50), To: api.at(250)}}
			if err := cl.CallsSince(t.Context(), o, got.each); err != nil {
				t.Fatal(err)
			}
			got.wantRange(50, 250)
			requests, _, _ := api.stats()
			// 10 pages of records; pieces of one page cost about two requests each.
			if requests > 10*5 {
				t.Errorf("%d requests for 10 pages of records", requests)
			}
			t.Logf("%d requests, %d batches", requests, got.hand)
		})
	}
}

// CallMetricsSince reads the window completely too, and includes a metric created
// exactly at From although the spec lists metrics "after" by_time[from].
func TestCallMetricsSince(t *testing.T) {
	for _, order := range []string{"newest", "oldest", "random"} {
		t.Run(order, func(t *testing.T) {
			api := newListAPI(120, order)
			api.shuffles, api.dup = -1, true
			s := newServer(t, newFakeClock(), api.handle)
			cl := newTestClient(t, s)
			got := map[int64]int{}
			o := ListCallMetricsOptions{ListOptions: ListOptions{PerPage: 25}, ByTime: TimeWindow{From: api.at(10), To: api.at(120)}, IncludeLifeCycle: true}
			err := cl.CallMetricsSince(t.Context(), o, func(page []events.CallMetric) error {
				for _, m := range page {
					got[m.CallID]++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := 10; i < 120; i++ {
				if got[int64(i+1)] != 1 {
					t.Fatalf("metric of call %d handed %d times, want once", i+1, got[int64(i+1)])
				}
			}
			if _, ok := got[10]; ok {
				t.Errorf("metric of call 10, created before From, handed")
			}
			req := s.requests()[0]
			if f := first(req.query["by_time[from]"]); f != utcSeconds(api.at(10).Add(-time.Second)) {
				t.Errorf("by_time[from]=%s, want a second before From", f)
			}
			if first(req.query["include"]) != IncludeLifeCycle {
				t.Errorf("include=%v, want life_cycle", req.query["include"])
			}
		})
	}
}

func TestSinceNeedsAWindow(t *testing.T) {
	s := newServer(t, newFakeClock(), newListAPI(1, "newest").handle)
	cl := newTestClient(t, s)
	none := func([]events.Call) error { return nil }
	if err := cl.CallsSince(t.Context(), ListCallsOptions{}, none); !IsValidation(err) {
		t.Errorf("CallsSince without a window: %v, want a validation error", err)
	}
	err := cl.CallMetricsSince(t.Context(), ListCallMetricsOptions{ByTime: TimeWindow{From: w0}}, func([]events.CallMetric) error { return nil })
	if !IsValidation(err) {
		t.Errorf("CallMetricsSince without To: %v, want a validation error", err)
	}
	if s.count() != 0 {
		t.Errorf("%d requests for invalid options, want none", s.count())
	}
}

func TestUsage(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, `{"calls":[]}`, headerRateTotal, "100", headerRateRemaining, "99")
	})
	cl := newTestClient(t, s)
	if u := cl.Usage(); u.Requests != 0 || u.Budget != 0 {
		t.Errorf("usage before any request: %+v, want none and an unknown budget", u)
	}
	if _, err := cl.ListCalls(t.Context(), ListCallsOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := cl.Usage(); u.Requests != 1 || u.Budget != 100 {
		t.Errorf("usage after one request: %+v, want 1 request of a budget of 100", u)
	}
}
