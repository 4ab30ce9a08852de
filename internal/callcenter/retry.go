package callcenter

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// RetryPolicy bounds the retries of one operation. Zero fields take the defaults
// shown.
//
// What is retried (decided here, in retryable, and nowhere else):
//   - 429 and 503, for every request: the server did not act on it;
//   - 500, 502 and 504, and network errors and timeouts, for idempotent requests
//     (GET, PUT, DELETE) only; a POST that creates (users, teams, exports) is
//     retried after a network error only when the request headers were never
//     written, since otherwise the server may have acted on it and a retry could
//     create a duplicate;
//   - a 2xx body that is not valid JSON, MaxDecodeRetries times, for idempotent
//     requests (a proxy may have cut it);
//   - nothing else: other 4xx (400, 401, 403, 404, 422, 423) are permanent.
//
// The wait is exponential with jitter, never shorter than the response's
// Retry-After; but the first failure of a read that is one response's fault (a
// 500, 502 or 504 without Retry-After, or a cut body) is retried at once: a
// lone fault of that kind says nothing of the server's load, and a poller
// waiting half a second (then for a token, near the end of a window) brings
// what the read carries that much later; a second failure starts the backoff.
// The limiter still admits every attempt. Retries stop when the next wait would
// pass MaxElapsedTime (the last error is returned, a 429 with its RetryAfter) or
// when ctx is done.
type RetryPolicy struct {
	// InitialInterval is the first wait (default 500ms).
	InitialInterval time.Duration
	// MaxInterval caps one wait (default 30s).
	MaxInterval time.Duration
	// MaxElapsedTime caps the time spent retrying one operation (default 2m);
	// negative: no retries.
	MaxElapsedTime time.Duration
	// Multiplier grows the wait (default 2); RandomizationFactor is the jitter
	// (default 0.5: each wait is within ±50%).
	Multiplier, RandomizationFactor float64
	// MaxDecodeRetries is how often a malformed 2xx body is retried (default 2;
	// negative: never).
	MaxDecodeRetries int
}

// withDefaults fills zero fields.
func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.InitialInterval <= 0 {
		p.InitialInterval = 500 * time.Millisecond
	}
	if p.MaxInterval <= 0 {
		p.MaxInterval = 30 * time.Second
	}
	if p.MaxElapsedTime == 0 {
		p.MaxElapsedTime = 2 * time.Minute
	}
	if p.Multiplier < 1 {
		p.Multiplier = 2
	}
	if p.RandomizationFactor <= 0 || p.RandomizationFactor >= 1 {
		p.RandomizationFactor = 0.5
	}
	if p.MaxDecodeRetries == 0 {
		p.MaxDecodeRetries = 2
	}
	return p
}

// retryBackOff is the exponential backoff of one operation, raised to the
// Retry-After of the last response.
type retryBackOff struct {
	exp   *backoff.ExponentialBackOff
	max   time.Duration // MaxElapsedTime; < 0: no retries
	floor time.Duration // Retry-After of the last attempt, consumed by NextBackOff
	now   bool          // retry the last attempt at once, consumed by NextBackOff
}

func newRetryBackOff(p RetryPolicy, c clock) *retryBackOff {
	exp := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.InitialInterval),
		backoff.WithMaxInterval(p.MaxInterval),
		backoff.WithMultiplier(p.Multiplier),
		backoff.WithRandomizationFactor(p.RandomizationFactor),
		backoff.WithMaxElapsedTime(max(p.MaxElapsedTime, 0)),
		backoff.WithClockProvider(c),
	)
	return &retryBackOff{exp: exp, max: p.MaxElapsedTime}
}

// NextBackOff returns the exponential wait, at least the last Retry-After (plus a
// little jitter so that clients told the same time do not return together), or
// backoff.Stop when that wait would pass MaxElapsedTime.
func (b *retryBackOff) NextBackOff() time.Duration {
	floor, now := b.floor, b.now
	b.floor, b.now = 0, false
	if b.max < 0 {
		return backoff.Stop
	}
	if now && floor == 0 {
		return 0
	}
	d := b.exp.NextBackOff()
	if d == backoff.Stop {
		return backoff.Stop
	}
	if d < floor {
		d = floor + time.Duration(rand.Int64N(int64(min(floor/10, time.Second))+1))
		if b.exp.GetElapsedTime()+d > b.max {
			return backoff.Stop
		}
	}
	return d
}

// Reset restarts the elapsed time.
func (b *retryBackOff) Reset() { b.exp.Reset(); b.floor, b.now = 0, false }

// retryAtOnce reports whether the first failure of a request may be retried
// without a wait: one response's fault (see RetryPolicy) of an idempotent
// request. 503 and 429 say the server is busy, network errors and timeouts may
// too: they wait.
func retryAtOnce(status int, idem bool, err error) bool {
	switch {
	case !idem:
		return false
	case errors.Is(err, ErrMalformedResponse):
		return true
	}
	return status == http.StatusInternalServerError || status == http.StatusBadGateway || status == http.StatusGatewayTimeout
}

// idempotent reports whether repeating a request with method cannot change the
// outcome.
func idempotent(method string) bool {
	return method == http.MethodGet || method == http.MethodPut || method == http.MethodDelete
}

// retryableStatus reports whether a response with status may be retried for a
// request that is (or is not) idempotent.
func retryableStatus(status int, idem bool) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return idem
	}
	return false
}
