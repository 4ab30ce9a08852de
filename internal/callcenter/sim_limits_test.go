package callcenter_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/sim"
)

// TestSimRateLimitHeaders checks that the client exposes the X-RateLimit-* headers
// of the latest response.
func TestSimRateLimitHeaders(t *testing.T) {
	tests := []struct {
		name      string
		plan      int
		wantTotal int
	}{
		{"unlimited", 0, 1_000_000},
		{"plan 100", 100, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A window far longer than the test keeps both requests in one.
			e := newSimEnv(t, sim.Config{Plan: tc.plan, RateWindow: time.Hour})
			c, p := e.client(t, simAdminKey)
			ctx := testCtx(t, 30*time.Second)
			if rl := c.RateLimit(); rl.Known() {
				t.Errorf("rate limit %+v before any request", rl)
			}
			for i := 1; i <= 2; i++ {
				page, err := c.ListUserStatuses(ctx, callcenter.ListOptions{})
				must(t, p, "list user statuses", err)
				rl := c.RateLimit()
				if rl.Total != tc.wantTotal || rl.Remaining != tc.wantTotal-i || rl.Used != 1 || rl.Observed.IsZero() || !rl.Known() {
					t.Errorf("after request %d: %+v, want total %d, remaining %d, used 1, observed", i, rl, tc.wantTotal, tc.wantTotal-i)
				}
				if page.Rate != rl {
					t.Errorf("page rate %+v, client's %+v", page.Rate, rl)
				}
			}
		})
	}
}

// TestSimLimiterPlan runs bursts of concurrent requests from several clients that
// share one Limiter against a plan of 100 per 2 s window (wall clock): no 429 ever,
// and with Share 0.5 the server's remaining never drops below the reserve.
func TestSimLimiterPlan(t *testing.T) {
	const (
		plan    = 100
		window  = 2 * time.Second
		clients = 4
		workers = 2 // per client
	)
	tests := []struct {
		name     string
		share    float64
		requests int
	}{
		{"share 1", 1, 250},
		{"share 0.5", 0.5, 150},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, sim.Config{Plan: plan, RateWindow: window, RetryAfter: sim.RetryAlways})
			lim, err := callcenter.NewLimiter(callcenter.LimiterConfig{Share: tc.share, Window: window})
			if err != nil {
				t.Fatal(err)
			}
			reserve := plan - int(tc.share*plan)
			ctx := testCtx(t, 90*time.Second)
			var (
				next, ok atomic.Int64
				wg       sync.WaitGroup
				probes   []*probe
				errMu    sync.Mutex
				errs     []error
			)
			start := time.Now()
			for range clients {
				c, p := e.client(t, simAdminKey, callcenter.WithLimiter(lim))
				probes = append(probes, p)
				for range workers {
					wg.Go(func() {
						for next.Add(1) <= int64(tc.requests) {
							_, err := c.ListUserStatuses(ctx, callcenter.ListOptions{})
							if p.keep(err) != nil {
								errMu.Lock()
								errs = append(errs, err)
								errMu.Unlock()
								continue
							}
							ok.Add(1)
						}
					})
				}
			}
			wg.Wait()
			elapsed := time.Since(start)

			if len(errs) > 0 {
				t.Errorf("%d requests failed, first: %v", len(errs), errs[0])
			}
			if ok.Load() != int64(tc.requests) {
				t.Errorf("%d requests succeeded, want %d", ok.Load(), tc.requests)
			}
			attempts, throttled, minRemaining := 0, 0, plan
			for _, p := range probes {
				for _, ri := range p.attempts() {
					attempts++
					if ri.Status == http.StatusTooManyRequests {
						throttled++
					}
					if ri.Rate.Remaining >= 0 {
						minRemaining = min(minRemaining, ri.Rate.Remaining)
					}
				}
			}
			if throttled != 0 {
				t.Errorf("%d responses were 429, want none", throttled)
			}
			if attempts != tc.requests {
				t.Errorf("%d attempts for %d requests, want no retries", attempts, tc.requests)
			}
			if minRemaining < reserve {
				t.Errorf("the server's remaining fell to %d: below the reserve of %d", minRemaining, reserve)
			}
			st := lim.Stats()
			if st.Limit != plan || st.Reserve != reserve || st.Throttled != 0 || st.Acquired != uint64(tc.requests) {
				t.Errorf("limiter stats %+v", st)
			}
			budget := plan - reserve
			t.Logf("%d requests at %d per window: %v, about %.1f windows (at least %d expected); min remaining %d; %d waits",
				tc.requests, budget, elapsed.Round(time.Millisecond), elapsed.Seconds()/window.Seconds(),
				(tc.requests+budget-1)/budget-1, minRemaining, st.Waits)
		})
	}
}
