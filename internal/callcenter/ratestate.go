package callcenter

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

// Rate-limit response headers.
const (
	headerRateTotal     = "X-RateLimit-Total"
	headerRateRemaining = "X-RateLimit-Remaining"
	headerRateUsed      = "X-RateLimit-Used-CurrentRequest"
)

// RateState is what one response's X-RateLimit-* headers said. A header that was
// absent or unreadable is -1.
type RateState struct {
	// Total is the account's requests per window (per minute in production).
	Total int
	// Remaining is the requests left in the server's current window.
	Remaining int
	// Used is the requests this response's request consumed.
	Used int
	// Observed is when the response arrived; zero when no header was present.
	Observed time.Time
}

// Known reports whether any rate-limit header was present.
func (r RateState) Known() bool { return !r.Observed.IsZero() }

// noRate is a RateState without any header.
func noRate() RateState { return RateState{Total: -1, Remaining: -1, Used: -1} }

// maxRetryAfter bounds a Retry-After; a longer wait ends the retries anyway (see
// RetryPolicy.MaxElapsedTime) and the error keeps the bound.
const maxRetryAfter = 24 * time.Hour

// parseRate reads the X-RateLimit-* headers of h, observed at now.
func parseRate(h http.Header, now time.Time) RateState {
	r := RateState{
		Total:     headerInt(h, headerRateTotal),
		Remaining: headerInt(h, headerRateRemaining),
		Used:      headerInt(h, headerRateUsed),
	}
	if r.Total >= 0 || r.Remaining >= 0 || r.Used >= 0 {
		r.Observed = now
	}
	return r
}

// headerInt reads a non-negative integer header ("12" or "12.0"); -1 when absent
// or unreadable.
func headerInt(h http.Header, name string) int {
	s := strings.TrimSpace(h.Get(name))
	if s == "" {
		return -1
	}
	v, err := apijson.IntText(s)
	if err != nil || v < 0 || v > 1<<31 {
		return -1
	}
	return int(v)
}

// retryAfter reads Retry-After as seconds (integer or decimal) or as an HTTP date
// relative to now; 0 when absent, unreadable or in the past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	s := strings.TrimSpace(h.Get("Retry-After"))
	if s == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		switch {
		case !(secs > 0): // also NaN
			return 0
		case secs > maxRetryAfter.Seconds():
			return maxRetryAfter
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(s); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}
