package callcenter_test

import (
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/sim"
)

// metricsRead reads the metrics of w and returns how many it got (each once) and
// the requests it took.
func metricsRead(t *testing.T, e *simEnv, c *callcenter.Client, p *probe, w callcenter.TimeWindow) (got, requests int) {
	t.Helper()
	before := e.served("api")
	seen := map[int64]int{}
	err := c.CallMetricsSince(testCtx(t, time.Minute), callcenter.ListCallMetricsOptions{ByTime: w}, func(page []events.CallMetric) error {
		for _, m := range page {
			seen[m.CallID]++
		}
		return nil
	})
	must(t, p, "call metrics since", err)
	for id, n := range seen {
		if n != 1 {
			t.Errorf("metric of call %d handed %d times", id, n)
		}
	}
	return len(seen), e.served("api") - before
}

// A list without meta (call_metrics has none) in a stable order is read page
// after page until a short one, not split: 2,500 metrics at 1,000 a page in 3
// requests.
func TestMetalessListPaged(t *testing.T) {
	e := newSimEnv(t, sim.Config{Backlog: 2500, CallRate: -1, Order: sim.NewestFirst})
	c, p := e.client(t, simAdminKey)
	got, requests := metricsRead(t, e, c, p, callcenter.TimeWindow{From: simStart.Add(-48 * time.Hour), To: simStart})
	if got != 2500 || requests != 3 {
		t.Errorf("%d metrics in %d requests, want 2500 in 3 (pages 1, 2, 3)", got, requests)
	}
}

// A list in no order (the simulator reshuffles every response) is read in pieces
// of one page; the second read of the window, a minute later, asks for the pieces
// the first found, not for the split again: one request per piece.
func TestSplitRemembered(t *testing.T) {
	e := newSimEnv(t, sim.Config{Backlog: 2500, CallRate: -1, Order: sim.RandomOrder})
	c, p := e.client(t, simAdminKey)
	w := callcenter.TimeWindow{From: simStart.Add(-48 * time.Hour), To: simStart}
	got, first := metricsRead(t, e, c, p, w)
	if got != 2500 {
		t.Fatalf("first read: %d metrics, want 2500", got)
	}
	w.From, w.To = w.From.Add(time.Minute), w.To.Add(time.Minute)
	again, second := metricsRead(t, e, c, p, w)
	if again < 2490 {
		t.Fatalf("second read: %d metrics, want the window's", again)
	}
	// 2,500 records in pieces filled at most three quarters: 4 to 8 pieces.
	if second > 8 || second >= first {
		t.Errorf("second read took %d requests (first %d): want the remembered pieces, one request each", second, first)
	}
	t.Logf("first read %d requests, second %d", first, second)
}
