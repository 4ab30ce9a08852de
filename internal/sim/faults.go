package sim

import (
	"math/rand/v2"
	"sync"
	"time"
)

// faults draws the injected faults from its own seeded source, so they never touch
// the world's randomness. Safe for concurrent use.
type faults struct {
	mu  sync.Mutex
	rng *rand.Rand
	cfg Config
}

func newFaults(cfg Config) *faults {
	return &faults{rng: rand.New(rand.NewPCG(cfg.Seed, 0xfa17)), cfg: cfg}
}

// latency is the delay to add to a request.
func (f *faults) latency() time.Duration {
	d := f.cfg.Latency
	if f.cfg.LatencyJitter > 0 {
		f.mu.Lock()
		d += time.Duration(f.rng.Int64N(int64(f.cfg.LatencyJitter)))
		f.mu.Unlock()
	}
	return d
}

// serverError decides whether to fail a request with a 5xx; html says whether the
// body is an HTML page (as a proxy would send) rather than an error object.
func (f *faults) serverError() (status int, html, fail bool) {
	if f.cfg.ErrorRate <= 0 {
		return 0, false, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() >= f.cfg.ErrorRate {
		return 0, false, false
	}
	status = []int{500, 502, 503}[f.rng.IntN(3)]
	return status, status != 500 && f.rng.IntN(2) == 0, true
}

// malformed decides whether to truncate a successful response body.
func (f *faults) malformed() bool {
	if f.cfg.MalformedRate <= 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < f.cfg.MalformedRate
}

// retryAfter decides whether a 429 carries Retry-After.
func (f *faults) retryAfter() bool {
	switch f.cfg.RetryAfter {
	case RetryAlways:
		return true
	case RetryNever:
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.IntN(2) == 0
}

// sleep waits d or until done is closed.
func sleep(done <-chan struct{}, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}
