package sim

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuf is a truth writer the test reads while the Accounts writes.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// testAccounts serves n accounts on clock, each keyed "key-NAME" with seed i+1
// and plan 100 on a manual rate clock; truth logs go to the returned map.
func testAccounts(t *testing.T, n int, clock Clock) (*Accounts, map[string]*lockedBuf) {
	t.Helper()
	var mu sync.Mutex
	truth := map[string]*lockedBuf{}
	rate := NewManualClock(testStart)
	a, err := NewAccounts(AccountsConfig{
		Names: AccountNames(n),
		Clock: clock,
		Start: testStart,
		Config: func(i int, name string) Config {
			return Config{Seed: uint64(i + 1), APIKey: "key-" + name, Plan: 100, RateClock: rate, CallRate: 6}
		},
		Truth: func(name string) (io.Writer, error) {
			mu.Lock()
			defer mu.Unlock()
			truth[name] = &lockedBuf{}
			return truth[name], nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, truth
}

// askAccount sends a request to the Accounts handler.
func askAccount(a *Accounts, method, path, key string, body string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Api-Auth", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	return rec
}

// Each account has its own key, rate budget and world; idle ones build nothing.
func TestAccountsAreIndependent(t *testing.T) {
	clock := NewManualClock(testStart)
	a, _ := testAccounts(t, 1000, clock)
	if a.Built() != 0 {
		t.Fatalf("built %d worlds before any request", a.Built())
	}
	clock.Advance(10 * time.Minute)
	if r := askAccount(a, "GET", "/a/acct001/api/v1/users", "key-acct002", ""); r.Code != 401 {
		t.Errorf("another account's key: %d, want 401", r.Code)
	}
	for i := 0; i < 100; i++ {
		askAccount(a, "GET", "/a/acct001/api/v1/users", "key-acct001", "")
	}
	if r := askAccount(a, "GET", "/a/acct001/api/v1/users", "key-acct001", ""); r.Code != 429 {
		t.Errorf("acct001 over its plan: %d, want 429", r.Code)
	}
	r := askAccount(a, "GET", "/a/acct002/api/v1/calls", "key-acct002", "")
	if r.Code != 200 || r.Header().Get("X-RateLimit-Remaining") != "99" {
		t.Errorf("acct002 after acct001's 429: %d remaining %q, want 200 and 99", r.Code, r.Header().Get("X-RateLimit-Remaining"))
	}
	other := askAccount(a, "GET", "/a/acct003/api/v1/calls", "key-acct003", "")
	if bytes.Equal(r.Body.Bytes(), other.Body.Bytes()) {
		t.Error("acct002 and acct003 serve the same calls: worlds are not independent")
	}
	if got := a.Built(); got != 3 {
		t.Errorf("built %d worlds, want 3 (only those asked)", got)
	}
	for _, p := range []string{"/a/nobody/api/v1/users", "/api/v1/users", "/a/"} {
		if r := askAccount(a, "GET", p, "key-acct001", ""); r.Code != 404 {
			t.Errorf("GET %s: %d, want 404", p, r.Code)
		}
	}
}

// A world built late is the world built early: same truth up to the same time.
func TestAccountsBuildTheSameWorldWhenever(t *testing.T) {
	early, late := NewManualClock(testStart), NewManualClock(testStart)
	a, ta := testAccounts(t, 2, early)
	b, tb := testAccounts(t, 2, late)
	if _, err := a.Sim("acct002"); err != nil {
		t.Fatal(err)
	}
	for range 30 {
		early.Advance(time.Minute)
		a.Sync()
	}
	late.Advance(30 * time.Minute)
	if _, err := b.Sim("acct002"); err != nil {
		t.Fatal(err)
	}
	if err := errorsOf(a.Close(), b.Close()); err != nil {
		t.Fatal(err)
	}
	x, y := ta["acct002"].bytes(), tb["acct002"].bytes()
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Fatalf("truth differs: %d bytes built early, %d built late", len(x), len(y))
	}
	if _, ok := ta["acct001"]; ok {
		t.Error("acct001 was never asked for but has a truth log")
	}
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Absolute URLs handed out carry the account's prefix.
func TestAccountsURLsCarryThePrefix(t *testing.T) {
	a, _ := testAccounts(t, 2, NewManualClock(testStart))
	r := askAccount(a, "POST", "/a/acct002/api/v1/account/export", "key-acct002",
		`{"output_format":"json","resources":[{"name":"users"}]}`)
	if r.Code != http.StatusAccepted {
		t.Fatalf("export: %d %s", r.Code, r.Body)
	}
	if !strings.Contains(r.Body.String(), "http://example.com/a/acct002/api/v1/jobs/1") {
		t.Errorf("job link without the account prefix: %s", r.Body)
	}
}

// Names and configs are checked up front, every problem listed.
func TestAccountsRefuseBadNames(t *testing.T) {
	_, err := NewAccounts(AccountsConfig{Names: []string{"ok", "a.b", "ok", "nokey"},
		Config: func(_ int, name string) Config {
			if name == "nokey" {
				return Config{}
			}
			return Config{APIKey: "k"}
		}})
	for _, want := range []string{`"a.b"`, "listed twice", `"nokey"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	if got := AccountNames(1000)[999]; got != "acct1000" {
		t.Errorf("AccountNames(1000)[999] = %s", got)
	}
}
