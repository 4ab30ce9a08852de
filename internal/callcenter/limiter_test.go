package callcenter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestNewLimiterConfig(t *testing.T) {
	for _, cfg := range []LimiterConfig{{Share: -0.1}, {Share: 1.01}, {Window: -time.Second}, {InitialLimit: -1}} {
		if _, err := NewLimiter(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	l, err := NewLimiter(LimiterConfig{})
	if err != nil || l.share != DefaultShare || l.window != time.Minute {
		t.Errorf("defaults: %+v %v", l, err)
	}
}

func rate(total, remaining, used int) RateState {
	return RateState{Total: total, Remaining: remaining, Used: used, Observed: time.Now()}
}

func TestLimiterProbesUntilLimitKnown(t *testing.T) {
	clk := newFakeClock()
	l := newTestLimiter(t, clk, LimiterConfig{Share: 0.5})
	first, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.admit(clk.Now()); ok {
		t.Fatal("a second request admitted before the limit is known")
	}
	first.Done(rate(10, 9, 1))
	for i := range 4 {
		if _, ok := l.admit(clk.Now()); !ok {
			t.Fatalf("request %d refused within the budget", i+2)
		}
		l.take(clk.Now())
	}
	if _, ok := l.admit(clk.Now()); ok {
		t.Fatal("request beyond the budget of 5 admitted")
	}
	if st := l.Stats(); st.Limit != 10 || st.Budget != 5 || st.Reserve != 5 || st.UsedInWindow != 5 || st.InFlight != 4 || st.ServerRemaining != 9 || st.Probing {
		t.Errorf("stats %+v", st)
	}
}

// fixedWindowServer mimics the API's account-wide fixed windows on clk: each window
// the other integrations spend `others` requests first.
type fixedWindowServer struct {
	mu            sync.Mutex
	start         time.Time
	window        time.Duration
	total, others int
	perWindow     map[int64]int // our requests per window index
	now           func() time.Time
	// noThrottle never answers 429: on the wall clock, scheduling delays could
	// move requests across window edges.
	noThrottle bool
}

func (f *fixedWindowServer) handle(_ int, w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	k := int64(f.now().Sub(f.start) / f.window)
	f.perWindow[k]++
	used := f.perWindow[k] + f.others
	f.mu.Unlock()
	hdr := []string{"X-RateLimit-Total", strconv.Itoa(f.total), "X-RateLimit-Remaining", strconv.Itoa(max(0, f.total-used)), "X-RateLimit-Used-CurrentRequest", "1"}
	if used > f.total && !f.noThrottle {
		reply(w, 429, `{"error_type":"too_many_requests"}`, hdr...)
		return
	}
	reply(w, 200, okUser, hdr...)
}

func (f *fixedWindowServer) maxPerWindow() (most, windows int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.perWindow {
		most = max(most, n)
	}
	return most, len(f.perWindow)
}

// slidingMax returns the most acquisitions within any window-long interval
// (t-window, t].
func slidingMax(times []time.Time, window time.Duration) int {
	best := 0
	for i, t := range times {
		n := 0
		for _, u := range times[:i+1] {
			if u.After(t.Add(-window)) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func TestLimiterShareRespected(t *testing.T) {
	clk := newFakeClock()
	srv := &fixedWindowServer{start: clk.Now(), window: time.Minute, total: 10, perWindow: map[int64]int{}, now: clk.Now}
	s := newServer(t, clk, srv.handle)
	lim := newTestLimiter(t, clk, LimiterConfig{Share: 0.5})
	var acquired []time.Time
	lim.onAcquire = func(at time.Time) { acquired = append(acquired, at) }
	c := newTestClient(t, s, WithLimiter(lim))
	for i := range 40 {
		if _, err := c.GetUser(t.Context(), 1); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if m := slidingMax(acquired, time.Minute); m > 5 {
		t.Errorf("%d requests within one window, budget 5", m)
	}
	if m, windows := srv.maxPerWindow(); m > 5 || windows < 8 {
		t.Errorf("server saw up to %d per window over %d windows, want at most 5 over at least 8", m, windows)
	}
	if st := lim.Stats(); st.Throttled != 0 || st.Acquired != 40 || st.Waits == 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestLimiterServerRemainingSlowsDown(t *testing.T) {
	clk := newFakeClock()
	l := newTestLimiter(t, clk, LimiterConfig{Share: 0.5, InitialLimit: 100})
	count := func() int {
		n := 0
		for {
			if _, ok := l.admit(clk.Now()); !ok {
				return n
			}
			l.take(clk.Now())
			n++
		}
	}
	tk := l.take(clk.Now())
	tk.Done(rate(100, 55, 1)) // others spent 44 of the window
	if n := count(); n != 5 {
		t.Errorf("admitted %d with Remaining 55 and a reserve of 50, want 5", n)
	}
	if wait, _ := l.admit(clk.Now()); wait != time.Minute {
		t.Errorf("wait %v, want the Remaining to expire after a window", wait)
	}

	l = newTestLimiter(t, clk, LimiterConfig{Share: 0.5, InitialLimit: 100})
	l.take(clk.Now()).Done(rate(100, 99, 1))
	if n := count(); n != 49 {
		t.Errorf("admitted %d with a full budget, want 49 more (budget 50)", n)
	}
}

func TestLimiterYieldsToOtherIntegrations(t *testing.T) {
	clk := newFakeClock()
	srv := &fixedWindowServer{start: clk.Now(), window: time.Minute, total: 100, others: 40, perWindow: map[int64]int{}, now: clk.Now}
	s := newServer(t, clk, srv.handle)
	lim := newTestLimiter(t, clk, LimiterConfig{Share: 0.5})
	c := newTestClient(t, s, WithLimiter(lim))
	for i := range 30 {
		if _, err := c.GetUser(t.Context(), 1); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	// Budget 50 and reserve 50, but others spend 40: 10 per window is what is left
	// without eating into the reserve.
	if m, windows := srv.maxPerWindow(); m > 10 || windows < 3 {
		t.Errorf("up to %d per window over %d windows, want at most 10 over at least 3", m, windows)
	}
	if st := lim.Stats(); st.Throttled != 0 {
		t.Errorf("caused 429s: %+v", st)
	}
}

func TestLimiterReconcilesUsed(t *testing.T) {
	clk := newFakeClock()
	l := newTestLimiter(t, clk, LimiterConfig{Share: 1, InitialLimit: 10})
	l.take(clk.Now()).Done(RateState{Total: 10, Remaining: -1, Used: 3})
	if st := l.Stats(); st.UsedInWindow != 3 {
		t.Errorf("used %d, want 3", st.UsedInWindow)
	}
	l.take(clk.Now()).Done(RateState{Total: 10, Remaining: -1, Used: 0})
	if st := l.Stats(); st.UsedInWindow != 3 {
		t.Errorf("used %d after a free request, want 3", st.UsedInWindow)
	}
	tk := l.take(clk.Now())
	tk.Cancel()
	tk.Done(rate(10, 0, 1)) // ignored: already ended
	if st := l.Stats(); st.UsedInWindow != 3 || st.InFlight != 0 {
		t.Errorf("stats after cancel %+v", st)
	}
	clk.Advance(time.Minute)
	if st := l.Stats(); st.UsedInWindow != 0 {
		t.Errorf("used %d a window later", st.UsedInWindow)
	}
}

func TestLimiterThrottled(t *testing.T) {
	clk := newFakeClock()
	l := newTestLimiter(t, clk, LimiterConfig{Share: 1, InitialLimit: 10})
	l.take(clk.Now()).Throttled(rate(10, -1, 1), 2*time.Second)
	if wait, ok := l.admit(clk.Now()); ok || wait != 2*time.Second {
		t.Fatalf("admitted during Retry-After (wait %v)", wait)
	}
	clk.Advance(2 * time.Second)
	if _, ok := l.admit(clk.Now()); !ok {
		t.Fatal("probe refused after Retry-After")
	}
	probe := l.take(clk.Now())
	if _, ok := l.admit(clk.Now()); ok {
		t.Fatal("second request admitted while probing")
	}
	probe.Done(rate(10, 8, 1))
	if _, ok := l.admit(clk.Now()); !ok {
		t.Fatal("refused after the probe's response")
	}
	if st := l.Stats(); st.Throttled != 1 || st.Probing {
		t.Errorf("stats %+v", st)
	}
}

func TestLimiterAcquireRespectsContext(t *testing.T) {
	l, err := NewLimiter(LimiterConfig{Window: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
	if _, err := l.Acquire(t.Context()); err != nil { // the probe, left in flight
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("blocked acquire: %v", err)
	}
	if st := l.Stats(); st.Acquired != 1 || st.Waits != 1 || st.WaitTime <= 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestLimiterSharedConcurrent runs two clients of one account from several
// goroutines on the wall clock with a short window. It asserts counts only: the
// limiter's own log never holds more than the budget within a window, and every
// request is made once.
func TestLimiterSharedConcurrent(t *testing.T) {
	const window = 200 * time.Millisecond
	srv := &fixedWindowServer{start: time.Now(), window: window, total: 20, perWindow: map[int64]int{}, now: time.Now, noThrottle: true}
	s := newServer(t, newFakeClock(), srv.handle)
	lim, err := NewLimiter(LimiterConfig{Share: 0.5, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acquired []time.Time
	lim.onAcquire = func(at time.Time) { mu.Lock(); acquired = append(acquired, at); mu.Unlock() }
	clients := make([]*Client, 2)
	for i := range clients {
		if clients[i], err = New(s.URL, secretKey(), WithLimiter(lim)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for g := range 4 {
		wg.Go(func() {
			for i := range 6 {
				if _, err := clients[g%2].GetUser(t.Context(), int64(i+1)); err != nil {
					errs <- fmt.Errorf("goroutine %d request %d: %w", g, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.count(); n != 24 {
		t.Errorf("server saw %d requests, want 24", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if m := slidingMax(acquired, window); m > 10 {
		t.Errorf("%d requests started within one window, budget 10", m)
	}
	if st := lim.Stats(); st.Acquired != 24 || st.InFlight != 0 || st.Limit != 20 || st.Budget != 10 {
		t.Errorf("stats %+v", st)
	}
}

// A late response to an older request must not raise the server's Remaining that a
// newer response already lowered.
func TestLimiterIgnoresLateOlderRemaining(t *testing.T) {
	clk := newFakeClock()
	l := newTestLimiter(t, clk, LimiterConfig{Share: 0.5, InitialLimit: 100})
	l.take(clk.Now()).Done(rate(100, 99, 1)) // the limit is known
	older := l.take(clk.Now())
	clk.Advance(time.Second)
	newer := l.take(clk.Now())
	newer.Done(rate(100, 60, 1))
	older.Done(rate(100, 90, 1))
	if got := l.Stats().ServerRemaining; got != 60 {
		t.Fatalf("ServerRemaining %d after a late older response, want 60", got)
	}
}
