package callcenter_test

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/sim"
)

// fastRetries retries fast, long enough for any fault sequence a seeded sim draws.
var fastRetries = callcenter.RetryPolicy{
	InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond,
	MaxElapsedTime: 15 * time.Second, MaxDecodeRetries: 20,
}

// TestSimRetriesOnFaults sends 100 GETs, one after another (so the seeded faults
// are the same every run), to a server failing 30% of requests with 5xx and
// truncating 20% of successful bodies: every GET succeeds after retries.
func TestSimRetriesOnFaults(t *testing.T) {
	e := newSimEnv(t, sim.Config{Backlog: 20, ErrorRate: 0.3, MalformedRate: 0.2})
	e.sim.Advance(20 * time.Minute)
	c, p := e.client(t, simAdminKey, callcenter.WithRetryPolicy(fastRetries))
	ctx := testCtx(t, 60*time.Second)

	first, err := c.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: 5}})
	must(t, p, "list calls", err)
	if len(first.Items) == 0 {
		t.Fatal("no calls")
	}
	callID := first.Items[0].ID
	gets := []func() error{
		func() error { _, err := c.ListUsers(ctx, callcenter.ListOptions{PerPage: 50}); return err },
		func() error { _, err := c.GetUser(ctx, 1); return err },
		func() error { _, err := c.ListUserStatuses(ctx, callcenter.ListOptions{}); return err },
		func() error { _, err := c.ListTeams(ctx, callcenter.ListOptions{}); return err },
		func() error { _, err := c.GetTeam(ctx, 2); return err },
		func() error {
			_, err := c.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: 5}})
			return err
		},
		func() error { _, err := c.GetCall(ctx, callID); return err },
		func() error {
			_, err := c.ListCallMetrics(ctx, callcenter.ListCallMetricsOptions{IncludeLifeCycle: true})
			return err
		},
		func() error { _, err := c.GetCallMetric(ctx, callID); return err },
	}
	failed := 0
	for i := 1; i < 100; i++ { // the first GET was the list above
		if err := p.keep(gets[i%len(gets)]()); err != nil {
			failed++
			t.Errorf("GET %d: %v", i, err)
		}
	}
	serverErrors := p.count(func(ri callcenter.ResponseInfo) bool { return ri.Status >= 500 })
	malformed := p.count(func(ri callcenter.ResponseInfo) bool {
		return ri.Status == http.StatusOK && errors.Is(ri.Err, callcenter.ErrMalformedResponse)
	})
	attempts := len(p.attempts())
	t.Logf("100 GETs: %d attempts, %d 5xx, %d malformed bodies, %d failed", attempts, serverErrors, malformed, failed)
	if serverErrors == 0 || malformed == 0 {
		t.Errorf("%d 5xx and %d malformed bodies seen: want some of each", serverErrors, malformed)
	}
	if attempts != 100+serverErrors+malformed {
		t.Errorf("%d attempts: want one per GET plus one per fault (%d)", attempts, 100+serverErrors+malformed)
	}
	for _, code := range []int{500, 502, 503} {
		if p.count(status(code)) == 0 {
			t.Errorf("no %d seen", code)
		}
	}
}

// TestSimRetries429Burst: requests that meet a burst of 429s (Retry-After always
// sent) are retried and succeed.
func TestSimRetries429Burst(t *testing.T) {
	t.Run("manual rate clock", func(t *testing.T) {
		// The burst clock only moves when told: one second before each request, and by
		// the Retry-After of each 429, as it would while the client waits. Requests at
		// seconds 10, 20 and 30 start bursts; exactly those three meet a 429.
		rateClock := sim.NewManualClock(simStart)
		e := newSimEnv(t, sim.Config{RateClock: rateClock, Burst429Every: 10 * time.Second, Burst429Length: time.Second, RetryAfter: sim.RetryAlways})
		c, p := e.client(t, simAdminKey, callcenter.WithRetryPolicy(callcenter.RetryPolicy{InitialInterval: time.Millisecond, MaxElapsedTime: 20 * time.Second}))
		var retryAfters []time.Duration
		p.then = func(ri callcenter.ResponseInfo) {
			var ae *callcenter.APIError
			if ri.Status == http.StatusTooManyRequests && errors.As(ri.Err, &ae) {
				retryAfters = append(retryAfters, ae.RetryAfter)
				rateClock.Advance(ae.RetryAfter)
			}
		}
		ctx := testCtx(t, 60*time.Second)
		const requests = 30
		for i := range requests {
			rateClock.Advance(time.Second)
			if _, err := c.GetUser(ctx, 1); p.keep(err) != nil {
				t.Errorf("request %d: %v", i+1, err)
			}
		}
		if !slices.Equal(retryAfters, []time.Duration{time.Second, time.Second, time.Second}) {
			t.Errorf("Retry-After of the 429s: %v, want three of 1s", retryAfters)
		}
		if n := len(p.attempts()); n != requests+3 {
			t.Errorf("%d attempts, want %d: one retry per 429", n, requests+3)
		}
		if st := c.Limiter().Stats(); st.Throttled != 3 || st.PausedUntil.IsZero() {
			t.Errorf("limiter stats %+v: want 3 throttled and a pause", st)
		}
	})

	t.Run("wall clock", func(t *testing.T) {
		// Bursts of 1 s every 4 s: a retry after Retry-After (1 s) lands after the
		// burst and well before the next one, so no retry meets a 429 again, whereas a
		// client ignoring Retry-After would retry into the same burst.
		e := newSimEnv(t, sim.Config{Burst429Every: 4 * time.Second, Burst429Length: time.Second, RetryAfter: sim.RetryAlways, Latency: 10 * time.Millisecond})
		c, p := e.client(t, simAdminKey, callcenter.WithRetryPolicy(callcenter.RetryPolicy{InitialInterval: time.Millisecond, MaxElapsedTime: 20 * time.Second}))
		var seen429 atomic.Int64
		p.then = func(ri callcenter.ResponseInfo) {
			if ri.Status == http.StatusTooManyRequests {
				seen429.Add(1)
			}
		}
		ctx := testCtx(t, 60*time.Second)
		deadline := time.Now().Add(20 * time.Second)
		var wg sync.WaitGroup
		var done, failed atomic.Int64
		for range 4 {
			wg.Go(func() {
				// Until a 429 was seen; every request that met it is then finished.
				for seen429.Load() == 0 && time.Now().Before(deadline) {
					if _, err := c.ListUserStatuses(ctx, callcenter.ListOptions{}); p.keep(err) != nil {
						failed.Add(1)
						t.Errorf("list user statuses: %v", err)
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		throttled := p.count(status(http.StatusTooManyRequests))
		t.Logf("%d requests, %d answered 429", done.Load(), throttled)
		if throttled == 0 {
			t.Fatalf("no 429 seen before the deadline")
		}
		if failed.Load() != 0 {
			t.Errorf("%d requests failed", failed.Load())
		}
		if ok := p.count(status(http.StatusOK)); int64(ok) != done.Load() {
			t.Errorf("%d successes for %d requests", ok, done.Load())
		}
		if again := p.count(func(ri callcenter.ResponseInfo) bool {
			return ri.Status == http.StatusTooManyRequests && ri.Attempt > 1
		}); again != 0 {
			t.Errorf("%d retries met a 429 again: Retry-After not honoured", again)
		}
	})
}
