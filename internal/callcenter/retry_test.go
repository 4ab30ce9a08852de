package callcenter

import (
	"context"
	"errors"
	"github.com/callbus/callbus/events"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

const okUser = `{"id": 1, "name": "u"}`

// script answers request n with steps[n-1] (the last step repeats).
type step struct {
	status int
	body   string
	hdr    []string
}

func scripted(steps ...step) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, _ *http.Request) {
		s := steps[min(n, len(steps))-1]
		reply(w, s.status, s.body, s.hdr...)
	}
}

func TestRetries(t *testing.T) {
	tooMany := step{429, `{"error_type":"too_many_requests","message":"slow down"}`, nil}
	ok := step{200, okUser, nil}
	bad := step{200, `{"id": 1, "name": "u`, nil}
	tests := []struct {
		name     string
		post     bool // CreateUser instead of GetUser
		steps    []step
		wantReqs int
		wantErr  func(error) bool
		minWaitS float64 // virtual seconds between the first two requests
		retryPol RetryPolicy
	}{
		{name: "429 without Retry-After", steps: []step{tooMany, ok}, wantReqs: 2},
		{name: "429 with Retry-After seconds", steps: []step{{429, "", []string{"Retry-After", "3"}}, ok}, wantReqs: 2, minWaitS: 3},
		{name: "503 with Retry-After", steps: []step{{503, "", []string{"Retry-After", "7"}}, ok}, wantReqs: 2, minWaitS: 7},
		{name: "500 then ok", steps: []step{{500, "", nil}, ok}, wantReqs: 2},
		{name: "502 html then ok", steps: []step{{502, "<html><title>Bad Gateway</title></html>", []string{"Content-Type", "text/html"}}, ok}, wantReqs: 2},
		{name: "504 504 then ok", steps: []step{{504, "", nil}, {504, "", nil}, ok}, wantReqs: 3},
		{name: "malformed twice then ok", steps: []step{bad, bad, ok}, wantReqs: 3},
		{name: "malformed always", steps: []step{bad}, wantReqs: 3, wantErr: func(err error) bool { return errors.Is(err, ErrMalformedResponse) }},
		{name: "400 permanent", steps: []step{{400, `{"error_type":"bad_request","message":"no"}`, nil}, ok}, wantReqs: 1,
			wantErr: func(err error) bool { var ae *APIError; return errors.As(err, &ae) && ae.Status == 400 }},
		{name: "404 permanent", steps: []step{{404, `{"error_type":"record_not_found","message":"User not found"}`, nil}, ok}, wantReqs: 1, wantErr: IsNotFound},
		{name: "401 permanent", steps: []step{{401, `{}`, nil}, ok}, wantReqs: 1, wantErr: IsUnauthorized},
		{name: "422 permanent", steps: []step{{422, `{"error_type":"model_validation_failed","errors":[{}]}`, nil}, ok}, wantReqs: 1, wantErr: IsValidation},
		{name: "503 until max elapsed", steps: []step{{503, "", nil}}, retryPol: RetryPolicy{InitialInterval: time.Second, MaxInterval: time.Second, MaxElapsedTime: 5 * time.Second},
			wantErr: func(err error) bool { return strings.Contains(err.Error(), "giving up after") && hasStatus(err, 503) }},
		{name: "Retry-After beyond max elapsed", steps: []step{{429, "", []string{"Retry-After", "3600"}}, ok}, wantReqs: 1,
			wantErr: func(err error) bool {
				var ae *APIError
				return IsRateLimited(err) && errors.As(err, &ae) && ae.RetryAfter == time.Hour
			}},
		{name: "post 500 not retried", post: true, steps: []step{{500, "", nil}, {201, okUser, nil}}, wantReqs: 1,
			wantErr: func(err error) bool { return hasStatus(err, 500) }},
		{name: "post 502 not retried", post: true, steps: []step{{502, "", nil}, {201, okUser, nil}}, wantReqs: 1,
			wantErr: func(err error) bool { return hasStatus(err, 502) }},
		{name: "post 503 retried", post: true, steps: []step{{503, "", nil}, {201, okUser, nil}}, wantReqs: 2},
		{name: "post 429 retried", post: true, steps: []step{tooMany, {201, okUser, nil}}, wantReqs: 2},
		{name: "post malformed not retried", post: true, steps: []step{{201, `{"id":`, nil}, {201, okUser, nil}}, wantReqs: 1,
			wantErr: func(err error) bool { return errors.Is(err, ErrMalformedResponse) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, newFakeClock(), scripted(tt.steps...))
			var opts []Option
			if tt.retryPol != (RetryPolicy{}) {
				opts = append(opts, WithRetryPolicy(tt.retryPol))
			}
			c := newTestClient(t, s, opts...)
			var err error
			if tt.post {
				_, err = c.CreateUser(t.Context(), CreateUserRequest{Email: "a@b.example", Role: events.RoleAgent})
			} else {
				_, err = c.GetUser(t.Context(), 1)
			}
			reqs := s.requests()
			if tt.wantReqs > 0 && len(reqs) != tt.wantReqs {
				t.Errorf("%d requests, want %d", len(reqs), tt.wantReqs)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("error: %v", err)
			case tt.wantErr != nil && (err == nil || !tt.wantErr(err)):
				t.Errorf("error %v is not the one expected", err)
			}
			if tt.minWaitS > 0 && len(reqs) > 1 {
				if gap := reqs[1].at.Sub(reqs[0].at); gap < time.Duration(tt.minWaitS*float64(time.Second)) {
					t.Errorf("retried after %v, before Retry-After %vs", gap, tt.minWaitS)
				}
			}
			if err != nil && !strings.HasPrefix(err.Error(), "get user 1: ") && !strings.HasPrefix(err.Error(), "create user: ") {
				t.Errorf("error does not name the operation: %v", err)
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	clk := newFakeClock()
	date := clk.Now().Add(90 * time.Second).Format(http.TimeFormat)
	s := newServer(t, clk, scripted(step{429, "", []string{"Retry-After", date}}, step{200, okUser, nil}))
	c := newTestClient(t, s, WithRetryPolicy(RetryPolicy{MaxElapsedTime: 5 * time.Minute}))
	if _, err := c.GetUser(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	reqs := s.requests()
	if len(reqs) != 2 || reqs[1].at.Sub(reqs[0].at) < 90*time.Second {
		t.Errorf("%d requests, gap %v", len(reqs), reqs[len(reqs)-1].at.Sub(reqs[0].at))
	}
	st := c.Limiter().Stats()
	if st.Throttled != 1 || st.PausedUntil.Sub(reqs[0].at) < 90*time.Second {
		t.Errorf("limiter not paused by the 429: %+v", st)
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	s := newServer(t, newFakeClock(), scripted(step{503, "", nil}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := newTestClient(t, s, WithResponseHook(func(ri ResponseInfo) {
		if ri.Attempt == 2 {
			cancel()
		}
	}))
	_, err := c.GetUser(ctx, 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if !hasStatus(err, 503) {
		t.Errorf("last error lost: %v", err)
	}
	if n := s.count(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if _, err := c.GetUser(ctx, 1); !errors.Is(err, context.Canceled) || s.count() != 2 {
		t.Errorf("canceled context still sent: %v", err)
	}
}

// TestNetworkErrors checks that a dropped connection is retried for a GET but not
// for a POST that reached the server, and that a refused connection (nothing sent)
// is retried for a POST too.
func TestNetworkErrors(t *testing.T) {
	drop := func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		reply(w, 200, okUser)
	}
	s := newServer(t, newFakeClock(), drop)
	c := newTestClient(t, s)
	if _, err := c.GetUser(t.Context(), 1); err != nil {
		t.Errorf("get after a dropped connection: %v", err)
	}
	s2 := newServer(t, newFakeClock(), drop)
	c2 := newTestClient(t, s2)
	if _, err := c2.CreateUser(t.Context(), CreateUserRequest{Email: "a@b.example", Role: events.RoleAgent}); err == nil {
		t.Error("post retried after the server may have acted on it")
	}
	if n := s2.count(); n != 1 {
		t.Errorf("%d posts, want 1", n)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	attempts := 0
	clk := newFakeClock()
	c3, err := New("http://"+addr, secretKey(), withClock(clk), WithLimiter(newTestLimiter(t, clk, LimiterConfig{Share: 1})),
		WithRetryPolicy(RetryPolicy{InitialInterval: time.Second, MaxInterval: time.Second, MaxElapsedTime: 3500 * time.Millisecond}),
		WithResponseHook(func(ResponseInfo) { attempts++ }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c3.CreateUser(t.Context(), CreateUserRequest{Email: "a@b.example", Role: events.RoleAgent})
	if err == nil || !strings.Contains(err.Error(), "giving up") {
		t.Errorf("error %v", err)
	}
	if attempts < 2 {
		t.Errorf("refused post tried %d times, want retries", attempts)
	}
}

// The first failure of a read that is one response's fault (500, 502, 504, a
// cut body) is retried at once; a second one, 503 and 429 (the server busy) and
// a Retry-After wait as before (virtual time: the gaps are exact).
func TestRetryAtOnce(t *testing.T) {
	ok, bad := step{200, okUser, nil}, step{200, `{"id": 1, "name": "u`, nil}
	backoffMin := 250 * time.Millisecond // InitialInterval 500ms, jitter ±50%
	for _, tc := range []struct {
		name  string
		steps []step
		atMin []time.Duration // the least gap before each retry; 0: none at all
	}{
		{"500", []step{{500, "", nil}, ok}, []time.Duration{0}},
		{"502 html", []step{{502, "<html></html>", []string{"Content-Type", "text/html"}}, ok}, []time.Duration{0}},
		{"504", []step{{504, "", nil}, ok}, []time.Duration{0}},
		{"cut body", []step{bad, ok}, []time.Duration{0}},
		{"500 twice: the second waits", []step{{500, "", nil}, {500, "", nil}, ok}, []time.Duration{0, backoffMin}},
		{"503 waits", []step{{503, "", nil}, ok}, []time.Duration{backoffMin}},
		{"429 waits", []step{{429, "", nil}, ok}, []time.Duration{backoffMin}},
		{"500 with Retry-After waits for it", []step{{500, "", []string{"Retry-After", "2"}}, ok}, []time.Duration{2 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, newFakeClock(), scripted(tc.steps...))
			c := newTestClient(t, s, WithRetryPolicy(RetryPolicy{InitialInterval: 500 * time.Millisecond}))
			if _, err := c.GetUser(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			reqs := s.requests()
			if len(reqs) != len(tc.atMin)+1 {
				t.Fatalf("%d requests, want %d", len(reqs), len(tc.atMin)+1)
			}
			for i, least := range tc.atMin {
				gap := reqs[i+1].at.Sub(reqs[i].at)
				if least == 0 && gap != 0 || gap < least {
					t.Errorf("retry %d after %v, want %v", i+1, gap, map[bool]string{true: "at once", false: "at least " + least.String()}[least == 0])
				}
			}
		})
	}
}
