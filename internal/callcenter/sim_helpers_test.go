package callcenter_test

// Integration tests of the client against the simulator (internal/sim) served by
// httptest: every operation of the spec, the rate-limit headers, the Limiter against
// a real plan, retries on injected faults and 429 bursts, drift, and the API key
// never leaking into an error.
//
// The world runs on a sim.ManualClock, so what exists at any point depends only on
// the seed and the Advance calls. Assertions are on counts and values, never on
// durations.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
)

// The keys are distinctive so that a leak into an error text is unmistakable.
const (
	simAdminKey = "sk_sim_ADMIN_Zq8Vw3Lp5Rt9Yx"
	simAgentKey = "sk_sim_AGENT_Hy2Mn7Kc4Xb6Uv"
	simWrongKey = "sk_sim_WRONG_Gf1Ds6Ja0Qe3Io"
)

var simKeys = []string{simAdminKey, simAgentKey, simWrongKey}

// simStart is where every world's manual clock starts.
var simStart = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// simEnv is a simulator served over HTTP.
type simEnv struct {
	sim *sim.Sim // on a manual clock: s.Advance moves the world
	srv *httptest.Server

	mu    sync.Mutex
	paths map[string]int // requests per first path segment ("api", "recordings", "reports")
}

// newSimEnv starts a simulator on a manual clock at simStart; APIKey defaults to
// simAdminKey and Seed to 42.
func newSimEnv(t testing.TB, cfg sim.Config) *simEnv {
	t.Helper()
	cfg.Clock = sim.NewManualClock(simStart)
	if cfg.APIKey == "" {
		cfg.APIKey = simAdminKey
	}
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	e := &simEnv{sim: s, paths: map[string]int{}}
	h := s.Handler()
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		e.mu.Lock()
		e.paths[seg]++
		e.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		e.srv.Close()
		if err := s.Close(); err != nil {
			t.Errorf("sim close: %v", err)
		}
	})
	return e
}

// served returns the number of requests whose path began with /seg/.
func (e *simEnv) served(seg string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.paths[seg]
}

// client returns a Client of the simulator authenticated by key, with a probe as
// its response hook. At cleanup the probe fails the test if any error it saw holds
// an API key.
func (e *simEnv) client(t *testing.T, key string, opts ...callcenter.Option) (*callcenter.Client, *probe) {
	t.Helper()
	p := &probe{}
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	all := append([]callcenter.Option{
		callcenter.WithHTTPClient(&http.Client{Transport: tr, Timeout: time.Minute}),
		callcenter.WithResponseHook(p.hook),
	}, opts...)
	c, err := callcenter.New(e.srv.URL, secret.New(key), all...)
	if err != nil {
		t.Fatalf("callcenter.New: %v", err)
	}
	t.Cleanup(func() { assertNoKeys(t, p.errors()) })
	return c, p
}

// probe records every attempt of a client and every error a test saw.
type probe struct {
	mu    sync.Mutex
	infos []callcenter.ResponseInfo
	errs  []error
	// then, when set before the first request, also sees every attempt.
	then func(callcenter.ResponseInfo)
}

func (p *probe) hook(ri callcenter.ResponseInfo) {
	p.mu.Lock()
	p.infos = append(p.infos, ri)
	if ri.Err != nil {
		p.errs = append(p.errs, ri.Err)
	}
	then := p.then
	p.mu.Unlock()
	if then != nil {
		then(ri)
	}
}

// keep records an operation's error for the key check and returns it.
func (p *probe) keep(err error) error {
	if err != nil {
		p.mu.Lock()
		p.errs = append(p.errs, err)
		p.mu.Unlock()
	}
	return err
}

func (p *probe) errors() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.errs)
}

func (p *probe) attempts() []callcenter.ResponseInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.infos)
}

// count returns the number of attempts that match.
func (p *probe) count(match func(callcenter.ResponseInfo) bool) int {
	n := 0
	for _, ri := range p.attempts() {
		if match(ri) {
			n++
		}
	}
	return n
}

func status(code int) func(callcenter.ResponseInfo) bool {
	return func(ri callcenter.ResponseInfo) bool { return ri.Status == code }
}

// must fails the test on err, after recording it.
func must(t *testing.T, p *probe, what string, err error) {
	t.Helper()
	if p.keep(err) != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// assertNoKeys fails when an error's text, in any form, or an APIError's fields
// hold one of the test keys (the report shows the text with the key masked).
func assertNoKeys(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		texts := []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%q", err)}
		var ae *callcenter.APIError
		if errors.As(err, &ae) {
			texts = append(texts, ae.Operation, ae.Path, ae.Message, ae.Type)
			for _, raw := range ae.Errors {
				texts = append(texts, string(raw))
			}
		}
	search:
		for _, text := range texts {
			for _, k := range simKeys {
				if strings.Contains(text, k) {
					t.Errorf("an error reveals an API key: %s", strings.ReplaceAll(text, k, "<KEY>"))
					break search
				}
			}
		}
	}
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func ptrTo[T any](v T) *T { return &v }

// newOpsEnv is an unlimited account (Plan 0) with an extra Agent key whose world
// ran 45 simulated minutes after a backlog, so calls exist and many have ended,
// with recordings and final metrics.
func newOpsEnv(t *testing.T) *simEnv {
	t.Helper()
	e := newSimEnv(t, sim.Config{Backlog: 30, Keys: []sim.Key{{Key: simAgentKey, Role: sim.RoleAgent}}})
	e.sim.Advance(45 * time.Minute)
	return e
}

// allCalls lists every call in one page, newest first.
func allCalls(ctx context.Context, t *testing.T, c *callcenter.Client, p *probe) []events.Call {
	t.Helper()
	page, err := c.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: callcenter.MaxPerPage}})
	must(t, p, "list calls", err)
	if page.Meta == nil || page.Meta.TotalPages != 1 || page.Meta.TotalCount != len(page.Items) {
		t.Fatalf("list calls: %d calls, meta %+v: want them all on one page", len(page.Items), page.Meta)
	}
	return page.Items
}

// callWithRecording returns an ended call that has a recording.
func callWithRecording(t *testing.T, calls []events.Call) events.Call {
	t.Helper()
	for _, c := range calls {
		if c.Recording != nil && c.Recording.ID > 0 {
			return c
		}
	}
	t.Fatalf("none of %d calls has a recording", len(calls))
	return events.Call{}
}

func callIDs(calls []events.Call) []int64 {
	ids := make([]int64, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	return ids
}

func sorted(ids []int64) []int64 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}
