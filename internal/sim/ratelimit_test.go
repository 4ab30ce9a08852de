package sim

import (
	"strconv"
	"testing"
	"time"
)

func TestRateLimit(t *testing.T) {
	rclk := NewManualClock(testStart)
	s := newTestSim(t, Config{Plan: 100, RateWindow: time.Second, RateClock: rclk, RetryAfter: RetryAlways})
	for i := 1; i <= 100; i++ {
		path, key := "/api/v1/teams", testKey
		if i%10 == 0 {
			key = "" // 401s count too, and carry the headers
		}
		r := do(t, s, "GET", path, key, nil)
		if r.header.Get("X-RateLimit-Total") != "100" || r.header.Get("X-RateLimit-Used-CurrentRequest") != "1" ||
			r.header.Get("X-RateLimit-Remaining") != strconv.Itoa(100-i) {
			t.Fatalf("request %d (%d): headers %v", i, r.code, r.header)
		}
	}
	r := do(t, s, "GET", "/api/v1/teams", testKey, nil)
	wantError(t, r, 429, "too_many_requests")
	if r.header.Get("X-RateLimit-Remaining") != "0" || r.header.Get("Retry-After") != "1" {
		t.Errorf("429 headers %v", r.header)
	}
	wantError(t, do(t, s, "GET", "/api/v1/teams", "", nil), 429, "too_many_requests")
	rclk.Advance(time.Second)
	if r := do(t, s, "GET", "/api/v1/teams", testKey, nil); r.code != 200 || r.header.Get("X-RateLimit-Remaining") != "99" {
		t.Errorf("next window: %d, remaining %s", r.code, r.header.Get("X-RateLimit-Remaining"))
	}
}

func TestRateLimitRetryAfterModes(t *testing.T) {
	for _, tc := range []struct {
		mode RetryAfterMode
		want func(n int) bool
	}{
		{RetryNever, func(n int) bool { return n == 0 }},
		{RetryAlways, func(n int) bool { return n == 20 }},
		{RetrySometimes, func(n int) bool { return n > 0 && n < 20 }},
	} {
		rclk := NewManualClock(testStart)
		s := newTestSim(t, Config{Plan: 100, RateClock: rclk, RetryAfter: tc.mode})
		for range 100 {
			do(t, s, "GET", "/api/v1/teams", testKey, nil)
		}
		rclk.Advance(30 * time.Second)
		with := 0
		for range 20 {
			r := do(t, s, "GET", "/api/v1/teams", testKey, nil)
			if r.code != 429 {
				t.Fatalf("mode %d: %d", tc.mode, r.code)
			}
			if v := r.header.Get("Retry-After"); v != "" {
				with++
				if v != "30" {
					t.Errorf("Retry-After %s, want 30", v)
				}
			}
		}
		if !tc.want(with) {
			t.Errorf("mode %d: %d of 20 with Retry-After", tc.mode, with)
		}
	}
}

func TestUnlimitedPlanStillSendsHeaders(t *testing.T) {
	s := newTestSim(t, Config{})
	for range 500 {
		do(t, s, "GET", "/api/v1/user-statuses", testKey, nil)
	}
	r := do(t, s, "GET", "/api/v1/user-statuses", testKey, nil)
	if r.code != 200 || r.header.Get("X-RateLimit-Total") != "1000000" || r.header.Get("X-RateLimit-Remaining") != "999499" {
		t.Errorf("%d %v", r.code, r.header)
	}
}

func TestBurst429(t *testing.T) {
	rclk := NewManualClock(testStart)
	s := newTestSim(t, Config{RateClock: rclk, Burst429Every: 10 * time.Second, Burst429Length: 2 * time.Second, RetryAfter: RetryAlways})
	codes := ""
	for range 24 {
		r := do(t, s, "GET", "/api/v1/teams", testKey, nil)
		codes += map[int]string{200: ".", 429: "x"}[r.code]
		rclk.Advance(time.Second)
	}
	if want := "..........xx........xx.."; codes != want {
		t.Errorf("codes per second %s, want %s", codes, want)
	}
}
