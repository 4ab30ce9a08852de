package callcenter

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/secret"
)

// testKey is distinctive so that tests can assert it never leaks.
const testKey = "ck_live_S3CR3T_9f8e7d6c5b4a"

// seen is one request as the server saw it.
type seen struct {
	method, path string
	query        map[string][]string
	header       http.Header
	body         string
	at           time.Time // on the test's fake clock
}

// server is an httptest server that records requests and answers with handle.
type server struct {
	*httptest.Server
	clk    *fakeClock
	mu     sync.Mutex
	reqs   []seen
	handle func(n int, w http.ResponseWriter, r *http.Request) // n: 1-based request number
}

func newServer(t *testing.T, clk *fakeClock, handle func(n int, w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{clk: clk, handle: handle}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, seen{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: string(body), at: clk.Now()})
		n := len(s.reqs)
		s.mu.Unlock()
		s.handle(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.reqs...)
}

func (s *server) count() int { return len(s.requests()) }

// newTestClient returns a client of s on the fake clock with a private limiter on
// the same clock, version 1.2.3 and quick retries (virtual time anyway).
func newTestClient(t *testing.T, s *server, opts ...Option) *Client {
	t.Helper()
	lim := newTestLimiter(t, s.clk, LimiterConfig{Share: 1})
	base := []Option{withClock(s.clk), WithLimiter(lim), WithVersion("1.2.3"),
		WithRetryPolicy(RetryPolicy{InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 10 * time.Second})}
	c, err := New(s.URL, secret.New(testKey), append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newTestLimiter(t *testing.T, clk clock, cfg LimiterConfig) *Limiter {
	t.Helper()
	l, err := NewLimiter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.clock = clk
	return l
}

// reply writes status and body with the JSON content type and extra headers.
func reply(w http.ResponseWriter, status int, body string, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		w.Header().Set(kv[i], kv[i+1])
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func secretKey() secret.Value      { return secret.New(testKey) }
func secretKeyEmpty() secret.Value { return secret.Value{} }
