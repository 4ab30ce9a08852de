package callcenter_test

import (
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/sim"
)

// CallsSince and CallMetricsSince against the simulator in every list order it
// offers, with /calls honouring by_time or not, over a backlog of several pages:
// every call and metric of the window, each once. Where /calls ignores by_time in
// a random order that reshuffles on every request, the fallback is best effort
// (three passes at most): nothing outside the window, nothing twice.
func TestSimSince(t *testing.T) {
	const backlog = 2500 // about 21 hours of calls before the start, 2 a minute
	from := simStart.Add(-10 * time.Hour)
	want := simWindowTruth(t, backlog, from)
	for _, order := range []sim.Order{sim.NewestFirst, sim.OldestFirst, sim.RandomOrder} {
		name := map[sim.Order]string{sim.NewestFirst: "newest", sim.OldestFirst: "oldest", sim.RandomOrder: "random"}[order]
		for _, ignore := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: ", calls ignore by_time"}[ignore], func(t *testing.T) {
				e := newSimEnv(t, sim.Config{Backlog: backlog, Order: order, CallsIgnoreByTime: ignore, CallRate: -1})
				c, p := e.client(t, simAdminKey)
				ctx := testCtx(t, time.Minute)
				w := callcenter.TimeWindow{From: from, To: simStart.Add(time.Hour)}
				calls := map[int64]int{}
				err := c.CallsSince(ctx, callcenter.ListCallsOptions{ByTime: w}, func(page []events.Call) error {
					for _, call := range page {
						calls[call.ID]++
						if call.CreatedTime.Before(from) {
							t.Errorf("call %d created %v, before the window", call.ID, call.CreatedTime)
						}
					}
					return nil
				})
				must(t, p, "calls since", err)
				bestEffort := ignore && order == sim.RandomOrder
				checkOnce(t, "calls", calls, want, bestEffort)
				metrics := map[int64]int{}
				err = c.CallMetricsSince(ctx, callcenter.ListCallMetricsOptions{ByTime: w}, func(page []events.CallMetric) error {
					for _, m := range page {
						metrics[m.CallID]++
					}
					return nil
				})
				must(t, p, "call metrics since", err)
				checkOnce(t, "metrics", metrics, want, false)
			})
		}
	}
}

// simWindowTruth lists the calls created at or after from in a world with the
// backlog, read from a twin world in newest-first order.
func simWindowTruth(t *testing.T, backlog int, from time.Time) map[int64]bool {
	t.Helper()
	e := newSimEnv(t, sim.Config{Backlog: backlog, CallRate: -1})
	c, p := e.client(t, simAdminKey)
	want := map[int64]bool{}
	for call, err := range c.AllCalls(testCtx(t, time.Minute), callcenter.ListCallsOptions{}) {
		must(t, p, "all calls", err)
		if !call.CreatedTime.Before(from) {
			want[call.ID] = true
		}
	}
	if len(want) < 1000 || len(want) == backlog {
		t.Fatalf("%d of %d calls in the window: want a window of several pages within the backlog", len(want), backlog)
	}
	return want
}

// checkOnce fails unless got holds each id of want once (some of them at least
// when partial) and nothing else.
func checkOnce(t *testing.T, what string, got map[int64]int, want map[int64]bool, partial bool) {
	t.Helper()
	for id, n := range got {
		if n != 1 || !want[id] {
			t.Errorf("%s: call %d handed %d times; in the window: %v", what, id, n, want[id])
		}
	}
	if !partial && len(got) != len(want) {
		t.Errorf("%d %s handed, want %d", len(got), what, len(want))
	}
	t.Logf("%d of %d %s", len(got), len(want), what)
}
