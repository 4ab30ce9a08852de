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
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
func newSimEnv(t *testing.T, cfg sim.Config) *simEnv {
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
func allCalls(ctx context.Context, t *testing.T, c *callcenter.Client, p *probe) []callcenter.Call {
	t.Helper()
	page, err := c.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: callcenter.MaxPerPage}})
	must(t, p, "list calls", err)
	if page.Meta == nil || page.Meta.TotalPages != 1 || page.Meta.TotalCount != len(page.Items) {
		t.Fatalf("list calls: %d calls, meta %+v: want them all on one page", len(page.Items), page.Meta)
	}
	return page.Items
}

// callWithRecording returns an ended call that has a recording.
func callWithRecording(t *testing.T, calls []callcenter.Call) callcenter.Call {
	t.Helper()
	for _, c := range calls {
		if c.Recording != nil && c.Recording.ID > 0 {
			return c
		}
	}
	t.Fatalf("none of %d calls has a recording", len(calls))
	return callcenter.Call{}
}

func callIDs(calls []callcenter.Call) []int64 {
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

// TestSimUsers covers list, create, get and update user, the server's 422s and the
// client's own refusals, which send nothing.
func TestSimUsers(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)

	page, err := c.ListUsers(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list users", err)
	ids := e.sim.UserIDs()
	var got []int64
	for _, u := range page.Items {
		got = append(got, u.ID)
		if u.ID == 1 && u.Role != callcenter.RoleAccountAdmin {
			t.Errorf("user 1 role %q, want %q", u.Role, callcenter.RoleAccountAdmin)
		}
	}
	if !slices.Equal(sorted(got), ids) {
		t.Fatalf("listed users %v, want %v", sorted(got), ids)
	}
	second, err := c.ListUsers(ctx, callcenter.ListOptions{Page: 2, PerPage: 5})
	must(t, p, "list users page 2", err)
	if len(second.Items) != 5 || second.Items[0].ID != page.Items[5].ID {
		t.Errorf("page 2 of 5: %d users starting at %d, want 5 starting at %d", len(second.Items), second.Items[0].ID, page.Items[5].ID)
	}

	created, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "grace@callbus.example", Role: callcenter.RoleAgent})
	must(t, p, "create user", err)
	if slices.Contains(ids, created.ID) || created.Email != "grace@callbus.example" || created.Role != callcenter.RoleAgent || len(created.Raw) == 0 {
		t.Errorf("created %+v", created)
	}
	read, err := c.GetUser(ctx, created.ID)
	must(t, p, "get user", err)
	if read.ID != created.ID || read.Email != created.Email || read.Role != created.Role {
		t.Errorf("get user %d: %+v, want %+v", created.ID, read, created)
	}
	updated, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{
		Role: ptrTo(callcenter.RoleSupervisor), Preference: ptrTo(4), MobileAppPreference: ptrTo(6)})
	must(t, p, "update user", err)
	if updated.ID != created.ID || updated.Role != callcenter.RoleSupervisor || updated.Preference != 4 ||
		updated.MobileAppPreference != 6 || updated.Email != created.Email {
		t.Errorf("updated %+v, want role Supervisor, preferences 4 and 6, email kept", updated)
	}
	if read, err = c.GetUser(ctx, created.ID); p.keep(err) != nil || read.Role != callcenter.RoleSupervisor || read.Preference != 4 {
		t.Errorf("get user after update: %+v, %v", read, err)
	}
	// A pointer to false is sent: the user is deleted, then restored.
	for _, del := range []bool{true, false} {
		updated, err = c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Deleted: ptrTo(del)})
		must(t, p, "update user deleted", err)
		if updated.Deleted != del {
			t.Errorf("deleted %v after setting %v", updated.Deleted, del)
		}
	}

	refusals := []struct {
		name   string
		call   func() error
		server bool   // refused by the server with 422 (else by the client, sending nothing)
		field  string // named in the error
	}{
		{name: "duplicate email in other case", server: true, field: "email", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "GRACE@callbus.example", Role: callcenter.RoleAdmin})
			return err
		}},
		{name: "duplicate email on update", server: true, field: "email", call: func() error {
			_, err := c.UpdateUser(ctx, 2, callcenter.UpdateUserRequest{Email: ptrTo("grace@callbus.example")})
			return err
		}},
		{name: "busy preference", server: true, field: "preference", call: func() error {
			_, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Preference: ptrTo(callcenter.UserBusy)})
			return err
		}},
		{name: "unknown status preference", server: true, field: "preference", call: func() error {
			_, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Preference: ptrTo(99)})
			return err
		}},
		{name: "bad role", field: "role", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "ada@callbus.example", Role: "Janitor"})
			return err
		}},
		{name: "bad role on update", field: "role", call: func() error {
			_, err := c.UpdateUser(ctx, created.ID, callcenter.UpdateUserRequest{Role: ptrTo("admin")})
			return err
		}},
		{name: "bad email", field: "email", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "ada at callbus", Role: callcenter.RoleAgent})
			return err
		}},
		{name: "named email", field: "email", call: func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "Ada <ada@callbus.example>", Role: callcenter.RoleAgent})
			return err
		}},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			sent := len(p.attempts()) - before
			if !callcenter.IsValidation(err) {
				t.Fatalf("err %v: want a validation error", err)
			}
			var ae *callcenter.APIError
			var ve *callcenter.ValidationError
			switch {
			case tc.server:
				if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity || ae.Type != callcenter.ErrorTypeValidation {
					t.Fatalf("err %v: want a 422 %s from the server", err, callcenter.ErrorTypeValidation)
				}
				if len(ae.Errors) == 0 || !strings.Contains(string(ae.Errors[0]), tc.field) {
					t.Errorf("field errors %s: want one naming %s", ae.Errors, tc.field)
				}
				if sent != 1 {
					t.Errorf("%d attempts: want 1 (a 422 is not retried)", sent)
				}
			default:
				if !errors.As(err, &ve) || !strings.Contains(strings.Join(ve.Problems, "; "), tc.field) {
					t.Fatalf("err %v: want a *ValidationError naming %s", err, tc.field)
				}
				if sent != 0 {
					t.Errorf("%d attempts: want none, the client refuses before sending", sent)
				}
			}
		})
	}

	after, err := c.ListUsers(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list users again", err)
	if len(after.Items) != len(ids)+1 {
		t.Errorf("%d users after one creation and refusals, want %d", len(after.Items), len(ids)+1)
	}
}

func TestSimUserStatuses(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	page, err := c.ListUserStatuses(testCtx(t, 30*time.Second), callcenter.ListOptions{})
	must(t, p, "list user statuses", err)
	want := []struct {
		id             int64
		name, typ, sub string
		enabled        int
	}{
		{0, "Offline", "offline", "offline", 1},
		{1, "Online", "online", "online", 1},
		{2, "Busy", "busy", "busy", 1},
		{3, "After Call Work", "acw", "acw", 1},
		{4, "Lunch", "offline", "offline", 1},
		{5, "Training", "offline", "offline", 1},
		{6, "Mobile", "online", "online_phone", 1},
		{7, "Meeting", "offline", "offline", 0},
	}
	byID := map[int64]callcenter.UserStatus{}
	for _, s := range page.Items {
		byID[s.ID] = s
	}
	if len(page.Items) != len(want) {
		t.Errorf("%d statuses, want %d", len(page.Items), len(want))
	}
	for _, w := range want {
		got, ok := byID[w.id]
		if !ok || got.Name != w.name || got.StatusType != w.typ || got.StatusSubType != w.sub || got.Enabled != w.enabled || got.Emoji == "" {
			t.Errorf("status %d: got %+v, want %+v", w.id, got, w)
		}
	}
}

// TestSimTeams covers list, create, get and update team.
func TestSimTeams(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)

	page, err := c.ListTeams(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list teams", err)
	if len(page.Items) != 4 {
		t.Fatalf("%d teams, want the 4 generated", len(page.Items))
	}
	for _, tm := range page.Items {
		if tm.ID <= 0 || tm.Name == "" || len(tm.Users) == 0 {
			t.Errorf("team %+v: want an id, a name and members", tm)
		}
	}

	created, err := c.CreateTeam(ctx, callcenter.TeamRequest{Name: ptrTo("Escalations"), Description: ptrTo("Second line"), Users: []callcenter.UserRef{{ID: 2}, {ID: 3}}})
	must(t, p, "create team", err)
	if created.ID != 5 || created.Name != "Escalations" || created.Description != "Second line" ||
		!slices.Equal(refIDs(created.Users), []int64{2, 3}) {
		t.Errorf("created %+v", created)
	}
	read, err := c.GetTeam(ctx, created.ID)
	must(t, p, "get team", err)
	if read.ID != created.ID || read.Name != created.Name || !slices.Equal(refIDs(read.Users), []int64{2, 3}) {
		t.Errorf("get team: %+v, want %+v", read, created)
	}
	updated, err := c.UpdateTeam(ctx, created.ID, callcenter.TeamRequest{Description: ptrTo("Third line"), Users: []callcenter.UserRef{}})
	must(t, p, "update team", err)
	if updated.Name != "Escalations" || updated.Description != "Third line" || len(updated.Users) != 0 {
		t.Errorf("updated %+v: want the name kept, the description changed, no members", updated)
	}
	updated, err = c.UpdateTeam(ctx, created.ID, callcenter.TeamRequest{Users: []callcenter.UserRef{{ID: 4}}})
	must(t, p, "update team members", err)
	if updated.Description != "Third line" || !slices.Equal(refIDs(updated.Users), []int64{4}) {
		t.Errorf("updated %+v: want the description kept, member 4", updated)
	}

	_, err = c.UpdateTeam(ctx, created.ID, callcenter.TeamRequest{Users: []callcenter.UserRef{{ID: 9999}}})
	var ae *callcenter.APIError
	if p.keep(err) == nil || !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity || !callcenter.IsValidation(err) {
		t.Errorf("update team with unknown user: %v, want a 422 from the server", err)
	}
	after, err := c.ListTeams(ctx, callcenter.ListOptions{PerPage: callcenter.MaxPerPage})
	must(t, p, "list teams again", err)
	if len(after.Items) != 5 {
		t.Errorf("%d teams, want 5", len(after.Items))
	}
}

func refIDs(refs []callcenter.UserRef) []int64 {
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	return sorted(ids)
}

// TestSimCallsPaging reads the calls page by page with a small per_page.
func TestSimCallsPaging(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	all := allCalls(ctx, t, c, p)
	if n := e.sim.Stats().Calls; len(all) != n {
		t.Fatalf("%d calls listed, the world has %d", len(all), n)
	}
	const per = 7
	if len(all) < 3*per {
		t.Fatalf("only %d calls: want several pages of %d", len(all), per)
	}
	wantPages := (len(all) + per - 1) / per

	before := len(p.attempts())
	var got []int64
	pages := 0
	for pg, err := range c.CallsPages(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: per}}) {
		must(t, p, "calls pages", err)
		pages++
		if pg.Number != pages || pg.PerPage != per || pg.Meta == nil ||
			pg.Meta.TotalCount != len(all) || pg.Meta.TotalPages != wantPages || pg.Meta.Current != pages {
			t.Errorf("page %d: number %d, per %d, meta %+v", pages, pg.Number, pg.PerPage, pg.Meta)
		}
		if pages < wantPages && len(pg.Items) != per {
			t.Errorf("page %d holds %d calls, want %d", pages, len(pg.Items), per)
		}
		got = append(got, callIDs(pg.Items)...)
	}
	if pages != wantPages {
		t.Errorf("%d pages, want %d", pages, wantPages)
	}
	if !slices.Equal(got, callIDs(all)) {
		t.Errorf("paged ids %v\nwant %v", got, callIDs(all))
	}
	if sent := len(p.attempts()) - before; sent != wantPages {
		t.Errorf("%d requests for %d pages: the iterator should stop at meta.total_pages", sent, wantPages)
	}

	beyond, err := c.ListCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{Page: wantPages + 1, PerPage: per}})
	must(t, p, "list calls beyond the last page", err)
	if len(beyond.Items) != 0 || !beyond.IsLast() {
		t.Errorf("page %d: %d calls, want none", wantPages+1, len(beyond.Items))
	}
}

// TestSimCallsByTime lists calls in created_time windows: from inclusive, to
// exclusive, bounds in any zone, sub-second bounds widened to whole seconds.
func TestSimCallsByTime(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	all := allCalls(ctx, t, c, p)
	oldest := all[len(all)-1].CreatedTime

	tests := []struct {
		name     string
		from, to time.Time
		wantNone bool
	}{
		{name: "live quarter hour", from: simStart.Add(5 * time.Minute), to: simStart.Add(20 * time.Minute)},
		{name: "bounds with offsets", from: simStart.Add(10 * time.Minute).In(time.FixedZone("+0530", 5*3600+1800)), to: simStart.Add(25 * time.Minute).In(time.FixedZone("-0500", -5*3600))},
		{name: "sub-second bounds", from: simStart.Add(5*time.Minute + 400*time.Millisecond), to: simStart.Add(15*time.Minute + 600*time.Millisecond)},
		{name: "from the oldest call, inclusive", from: oldest, to: simStart},
		{name: "to at a call's time, exclusive", from: simStart, to: all[len(all)/4].CreatedTime},
		{name: "after the last call", from: simStart.Add(2 * time.Hour), to: simStart.Add(3 * time.Hour), wantNone: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The client widens the window to whole seconds; the server's to is exclusive.
			from := tc.from.Truncate(time.Second)
			to := tc.to.Truncate(time.Second)
			if !to.Equal(tc.to) {
				to = to.Add(time.Second)
			}
			var want []int64
			for _, call := range all {
				if !call.CreatedTime.Before(from) && call.CreatedTime.Before(to) {
					want = append(want, call.ID)
				}
			}
			if (len(want) == 0) != tc.wantNone {
				t.Fatalf("%d calls in the window: bad test data", len(want))
			}
			page, err := c.ListCalls(ctx, callcenter.ListCallsOptions{
				ListOptions: callcenter.ListOptions{PerPage: callcenter.MaxPerPage},
				ByTime:      callcenter.TimeWindow{From: tc.from, To: tc.to},
			})
			must(t, p, "list calls by time", err)
			if got := callIDs(page.Items); !slices.Equal(got, want) {
				t.Errorf("ids %v\nwant %v", got, want)
			}
			if page.Meta == nil || page.Meta.TotalCount != len(want) {
				t.Errorf("meta %+v: want total_count %d", page.Meta, len(want))
			}
			// Paging within the window reads the same calls.
			var paged []int64
			for call, err := range c.AllCalls(ctx, callcenter.ListCallsOptions{
				ListOptions: callcenter.ListOptions{PerPage: 3},
				ByTime:      callcenter.TimeWindow{From: tc.from, To: tc.to},
			}) {
				must(t, p, "all calls by time", err)
				paged = append(paged, call.ID)
			}
			if !slices.Equal(paged, want) {
				t.Errorf("paged ids %v\nwant %v", paged, want)
			}
		})
	}
}

// TestSimGetCall reads one call and compares it with the listed one.
func TestSimGetCall(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	listed := callWithRecording(t, allCalls(ctx, t, c, p))
	got, err := c.GetCall(ctx, listed.ID)
	must(t, p, "get call", err)
	if got.ID != listed.ID || got.Direction != listed.Direction || !got.CreatedTime.Equal(listed.CreatedTime) ||
		got.BillDuration != listed.BillDuration || len(got.Participants) != len(listed.Participants) ||
		got.Recording == nil || got.Recording.ID != listed.Recording.ID || len(got.Raw) == 0 {
		t.Errorf("get call %d: %+v\nlisted %+v", listed.ID, got, listed)
	}
	for _, part := range got.Participants {
		if part.CallID != got.ID {
			t.Errorf("participant %d of call %d has call_id %d", part.ID, got.ID, part.CallID)
		}
	}
}

// TestSimCallMetrics lists metrics in a window with and without include=life_cycle.
func TestSimCallMetrics(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	all := allCalls(ctx, t, c, p)
	window := callcenter.TimeWindow{From: simStart.Add(5 * time.Minute), To: simStart.Add(30 * time.Minute)}
	var want []int64
	for _, call := range all {
		if !call.CreatedTime.Before(window.From) && call.CreatedTime.Before(window.To) {
			want = append(want, call.ID)
		}
	}
	if len(want) == 0 {
		t.Fatal("no call in the window: bad test data")
	}

	for _, include := range []bool{true, false} {
		t.Run(fmt.Sprintf("include life_cycle %v", include), func(t *testing.T) {
			o := callcenter.ListCallMetricsOptions{ByTime: window, IncludeLifeCycle: include}
			o.PerPage = callcenter.MaxPerPage
			page, err := c.ListCallMetrics(ctx, o)
			must(t, p, "list call metrics", err)
			var got []int64
			withEvents := 0
			for _, m := range page.Items {
				got = append(got, m.CallID)
				if m.CreatedTime.Before(window.From) || !m.CreatedTime.Before(window.To) {
					t.Errorf("metric %d created %v, outside the window", m.ID, m.CreatedTime)
				}
				if hasKey := strings.Contains(string(m.Raw), `"life_cycle"`); hasKey != include || (m.LifeCycle != nil) != include {
					t.Errorf("metric %d: life_cycle in body %v, decoded %v; want both %v", m.ID, hasKey, m.LifeCycle != nil, include)
				}
				if len(m.LifeCycle) > 0 {
					withEvents++
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("metrics of calls %v\nwant %v", got, want)
			}
			if include && withEvents == 0 {
				t.Errorf("no metric in the window has life-cycle events: want finalized ones")
			}
		})
	}

	t.Run("half window refused before sending", func(t *testing.T) {
		before := len(p.attempts())
		_, err := c.ListCallMetrics(ctx, callcenter.ListCallMetricsOptions{ByTime: callcenter.TimeWindow{From: window.From}})
		var ve *callcenter.ValidationError
		if !errors.As(p.keep(err), &ve) {
			t.Errorf("err %v: want a *ValidationError", err)
		}
		if sent := len(p.attempts()) - before; sent != 0 {
			t.Errorf("%d requests sent, want none", sent)
		}
	})
}

// TestSimGetCallMetric reads the metric of a call whose metric is final.
func TestSimGetCallMetric(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	o := callcenter.ListCallMetricsOptions{IncludeLifeCycle: true}
	o.PerPage = callcenter.MaxPerPage
	page, err := c.ListCallMetrics(ctx, o)
	must(t, p, "list call metrics", err)
	var listed *callcenter.CallMetric
	for i, m := range page.Items {
		if m.CreatedTime.After(simStart) && len(m.LifeCycle) > 0 && m.BillDuration != nil {
			listed = &page.Items[i]
			break
		}
	}
	if listed == nil {
		t.Fatal("no finalized metric of a live call")
	}
	got, err := c.GetCallMetric(ctx, listed.CallID)
	must(t, p, "get call metric", err)
	if got.ID != listed.ID || got.CallID != listed.CallID || !got.UpdatedTime.Equal(listed.UpdatedTime) ||
		got.TalkTime != listed.TalkTime || got.HoldDuration != listed.HoldDuration ||
		got.BillDuration == nil || *got.BillDuration != *listed.BillDuration || got.TalkTimeUnit != "seconds" {
		t.Errorf("get call metric of call %d: %+v\nlisted %+v", listed.CallID, got, *listed)
	}
	if got.LifeCycle != nil {
		t.Errorf("life_cycle %v without include", got.LifeCycle)
	}
}

// TestSimRecordings downloads (the redirect is returned, not followed) and deletes
// a recording; a second delete is a 404.
func TestSimRecordings(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	call := callWithRecording(t, allCalls(ctx, t, c, p))
	recID := call.Recording.ID

	before := len(p.attempts())
	loc, err := c.DownloadRecording(ctx, call.ID, recID)
	must(t, p, "download recording", err)
	if !strings.HasPrefix(loc, e.srv.URL+"/recordings/") || !strings.Contains(loc, strconv.FormatInt(recID, 10)) {
		t.Errorf("location %q: want a URL of recording %d on the server", loc, recID)
	}
	if got := p.attempts()[before:]; len(got) != 1 || got[0].Status != http.StatusFound {
		t.Errorf("attempts %+v: want one answered 302", got)
	}
	if n := e.served("recordings"); n != 0 {
		t.Errorf("%d requests for recording files: the redirect must not be followed", n)
	}

	deleted, err := c.DeleteRecording(ctx, call.ID, recID)
	must(t, p, "delete recording", err)
	if !deleted {
		t.Error("delete recording: status false, want true")
	}
	again, err := c.DeleteRecording(ctx, call.ID, recID)
	var ae *callcenter.APIError
	if !errors.As(p.keep(err), &ae) || ae.Status != http.StatusNotFound || ae.Type != callcenter.ErrorTypeNotFound || !callcenter.IsNotFound(err) {
		t.Errorf("second delete: %v, %v; want a 404 %s", again, err, callcenter.ErrorTypeNotFound)
	}
	if _, err := c.DownloadRecording(ctx, call.ID, recID); !callcenter.IsNotFound(p.keep(err)) {
		t.Errorf("download after delete: %v, want a 404", err)
	}
	after, err := c.GetCall(ctx, call.ID)
	must(t, p, "get call after delete", err)
	if after.Recording != nil {
		t.Errorf("call %d still has recording %+v", call.ID, after.Recording)
	}
}

// TestSimExport starts an export and reads its job until it completes; the world's
// clock is advanced between reads.
func TestSimExport(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	started, err := c.Export(ctx, callcenter.ExportRequest{
		Resources:    []callcenter.ExportResource{{Name: callcenter.ExportUsers}, {Name: callcenter.ExportTeams}},
		OutputFormat: callcenter.FormatJSON,
	})
	must(t, p, "export", err)
	if started.ID <= 0 || started.Status != callcenter.JobStarted || started.Message == "" {
		t.Fatalf("export: %+v", started)
	}
	job, err := c.GetJob(ctx, started.ID)
	must(t, p, "get job", err)
	if job.ID != started.ID || job.Status != callcenter.JobStarted || (job.JobData != nil && job.JobData.Path != "") {
		t.Errorf("new job %+v: want started without a path", job)
	}
	// A job completes within 40 simulated seconds (doc.go: 2 to 10, then 5 to 30).
	e.sim.Advance(time.Minute)
	job, err = c.GetJob(ctx, started.ID)
	must(t, p, "get job after a minute", err)
	if job.Status != callcenter.JobCompleted || job.JobData == nil || !strings.HasPrefix(job.JobData.Path, e.srv.URL+"/reports/") {
		t.Fatalf("job after a minute: %+v, data %+v: want completed with a report path", job, job.JobData)
	}
	if !slices.ContainsFunc(job.Links, func(l callcenter.JobLink) bool { return l.Rel == "download" && l.Href == job.JobData.Path }) {
		t.Errorf("links %+v: want a download link to the path", job.Links)
	}
	resp, err := http.Get(job.JobData.Path)
	if err != nil {
		t.Fatalf("fetch report: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("report: %d %.200s", resp.StatusCode, body)
	}
}

// TestSimExportAndWait follows a job to completion, and a stalled one to
// ErrJobStalled, advancing the world's clock after every job read.
func TestSimExportAndWait(t *testing.T) {
	req := callcenter.ExportRequest{
		DateRange: &callcenter.DateRange{StartDate: simStart.Add(-24 * time.Hour), EndDate: simStart.Add(time.Hour)},
		Resources: []callcenter.ExportResource{
			{Name: callcenter.ExportCalls, Include: []string{callcenter.IncludeParticipants, callcenter.IncludeRecording}},
			{Name: callcenter.ExportCallMetrics, Include: []string{callcenter.IncludeLifeCycle}},
		},
		OutputFormat: callcenter.FormatJSON,
	}
	tests := []struct {
		name       string
		stallRate  float64
		maxWait    time.Duration
		wantStalls bool
	}{
		{name: "completes", maxWait: time.Minute},
		{name: "stalls", stallRate: 1, maxWait: 300 * time.Millisecond, wantStalls: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, sim.Config{Backlog: 30, JobStallRate: tc.stallRate})
			e.sim.Advance(10 * time.Minute)
			c, p := e.client(t, simAdminKey)
			var statuses []string
			path, err := c.ExportAndWait(testCtx(t, time.Minute), req, callcenter.ExportWait{
				PollInterval: 5 * time.Millisecond, MaxPollInterval: 20 * time.Millisecond, MaxWait: tc.maxWait,
				OnPoll: func(j callcenter.Job) {
					if len(statuses) == 0 || statuses[len(statuses)-1] != j.Status {
						statuses = append(statuses, j.Status)
					}
					// Less than the shortest stay in zip_in_progress (5 s), so every
					// status is seen.
					e.sim.Advance(3 * time.Second)
				},
			})
			p.keep(err)
			if tc.wantStalls {
				if !errors.Is(err, callcenter.ErrJobStalled) || path != "" {
					t.Errorf("got %q, %v: want ErrJobStalled", path, err)
				}
				if !slices.Equal(statuses, []string{callcenter.JobStarted, callcenter.JobZipInProgress}) {
					t.Errorf("statuses %v", statuses)
				}
				return
			}
			if err != nil {
				t.Fatalf("export and wait: %v", err)
			}
			if !strings.HasPrefix(path, e.srv.URL+"/reports/") {
				t.Errorf("path %q: want a report URL on the server", path)
			}
			if want := []string{callcenter.JobStarted, callcenter.JobZipInProgress, callcenter.JobCompleted}; !slices.Equal(statuses, want) {
				t.Errorf("statuses %v, want %v", statuses, want)
			}
		})
	}
}

// TestSimNotFound reads records that do not exist: 404 record_not_found naming
// the record, not retried.
func TestSimNotFound(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	callID := allCalls(ctx, t, c, p)[0].ID
	tests := []struct {
		name, kind string
		call       func() error
	}{
		{"user", "User", func() error { _, err := c.GetUser(ctx, 9999); return err }},
		{"update user", "User", func() error {
			_, err := c.UpdateUser(ctx, 9999, callcenter.UpdateUserRequest{Preference: ptrTo(1)})
			return err
		}},
		{"team", "Team", func() error { _, err := c.GetTeam(ctx, 999); return err }},
		{"call", "Call", func() error { _, err := c.GetCall(ctx, 999); return err }},
		{"call metric", "Call", func() error { _, err := c.GetCallMetric(ctx, 999); return err }},
		{"recording", "Recording", func() error { _, err := c.DownloadRecording(ctx, callID, 1); return err }},
		{"job", "Job", func() error { _, err := c.GetJob(ctx, 999); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			var ae *callcenter.APIError
			if !errors.As(err, &ae) || !callcenter.IsNotFound(err) {
				t.Fatalf("err %v: want a 404 *APIError", err)
			}
			if ae.Status != http.StatusNotFound || ae.Type != callcenter.ErrorTypeNotFound || !strings.Contains(ae.Message, tc.kind) {
				t.Errorf("%+v: want 404 %s naming %s", ae, callcenter.ErrorTypeNotFound, tc.kind)
			}
			if !strings.Contains(err.Error(), callcenter.ErrorTypeNotFound) {
				t.Errorf("error text %q does not name %s", err, callcenter.ErrorTypeNotFound)
			}
			if sent := len(p.attempts()) - before; sent != 1 {
				t.Errorf("%d attempts, want 1", sent)
			}
		})
	}
}

// TestSimUnauthorized uses a key the account does not know: 401, not retried.
func TestSimUnauthorized(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simWrongKey)
	ctx := testCtx(t, 30*time.Second)
	tests := []struct {
		name string
		call func() error
	}{
		{"list users", func() error { _, err := c.ListUsers(ctx, callcenter.ListOptions{}); return err }},
		{"get call", func() error { _, err := c.GetCall(ctx, 1_000_001); return err }},
		{"create team", func() error { _, err := c.CreateTeam(ctx, callcenter.TeamRequest{Name: ptrTo("x")}); return err }},
		{"export", func() error {
			_, err := c.Export(ctx, callcenter.ExportRequest{Resources: []callcenter.ExportResource{{Name: callcenter.ExportUsers}}, OutputFormat: callcenter.FormatJSON})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			if !callcenter.IsUnauthorized(err) || callcenter.IsForbidden(err) || callcenter.IsNotFound(err) {
				t.Fatalf("err %v: want 401", err)
			}
			if sent := len(p.attempts()) - before; sent != 1 {
				t.Errorf("%d attempts, want 1", sent)
			}
		})
	}
}

// TestSimForbidden uses an Agent's key: reads work, writes and export are 403.
func TestSimForbidden(t *testing.T) {
	e := newOpsEnv(t)
	c, p := e.client(t, simAgentKey)
	ctx := testCtx(t, 30*time.Second)
	_, err := c.ListUsers(ctx, callcenter.ListOptions{})
	must(t, p, "list users with an Agent key", err)
	call := callWithRecording(t, allCalls(ctx, t, c, p))
	tests := []struct {
		name string
		call func() error
	}{
		{"export", func() error {
			_, err := c.Export(ctx, callcenter.ExportRequest{Resources: []callcenter.ExportResource{{Name: callcenter.ExportUsers}}, OutputFormat: callcenter.FormatJSON})
			return err
		}},
		{"create user", func() error {
			_, err := c.CreateUser(ctx, callcenter.CreateUserRequest{Email: "eve@callbus.example", Role: callcenter.RoleAdmin})
			return err
		}},
		{"update team", func() error { _, err := c.UpdateTeam(ctx, 1, callcenter.TeamRequest{Name: ptrTo("mine")}); return err }},
		{"delete recording", func() error { _, err := c.DeleteRecording(ctx, call.ID, call.Recording.ID); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(p.attempts())
			err := p.keep(tc.call())
			var ae *callcenter.APIError
			if !callcenter.IsForbidden(err) || !errors.As(err, &ae) || ae.Type != "access_denied" {
				t.Fatalf("err %v: want 403 access_denied", err)
			}
			if sent := len(p.attempts()) - before; sent != 1 {
				t.Errorf("%d attempts, want 1", sent)
			}
		})
	}
	// The refused delete left the recording alone.
	got, err := c.GetCall(ctx, call.ID)
	must(t, p, "get call", err)
	if got.Recording == nil || got.Recording.ID != call.Recording.ID {
		t.Errorf("recording %+v after a refused delete", got.Recording)
	}
}

// TestSimRateLimitHeaders checks that the client exposes the X-RateLimit-* headers
// of the latest response.
func TestSimRateLimitHeaders(t *testing.T) {
	tests := []struct {
		name      string
		plan      int
		wantTotal int
	}{
		{"unlimited", 0, 1_000_000},
		{"plan 100", 100, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A window far longer than the test keeps both requests in one.
			e := newSimEnv(t, sim.Config{Plan: tc.plan, RateWindow: time.Hour})
			c, p := e.client(t, simAdminKey)
			ctx := testCtx(t, 30*time.Second)
			if rl := c.RateLimit(); rl.Known() {
				t.Errorf("rate limit %+v before any request", rl)
			}
			for i := 1; i <= 2; i++ {
				page, err := c.ListUserStatuses(ctx, callcenter.ListOptions{})
				must(t, p, "list user statuses", err)
				rl := c.RateLimit()
				if rl.Total != tc.wantTotal || rl.Remaining != tc.wantTotal-i || rl.Used != 1 || rl.Observed.IsZero() || !rl.Known() {
					t.Errorf("after request %d: %+v, want total %d, remaining %d, used 1, observed", i, rl, tc.wantTotal, tc.wantTotal-i)
				}
				if page.Rate != rl {
					t.Errorf("page rate %+v, client's %+v", page.Rate, rl)
				}
			}
		})
	}
}

// TestSimLimiterPlan runs bursts of concurrent requests from several clients that
// share one Limiter against a plan of 100 per 2 s window (wall clock): no 429 ever,
// and with Share 0.5 the server's remaining never drops below the reserve.
func TestSimLimiterPlan(t *testing.T) {
	const (
		plan    = 100
		window  = 2 * time.Second
		clients = 4
		workers = 2 // per client
	)
	tests := []struct {
		name     string
		share    float64
		requests int
	}{
		{"share 1", 1, 250},
		{"share 0.5", 0.5, 150},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newSimEnv(t, sim.Config{Plan: plan, RateWindow: window, RetryAfter: sim.RetryAlways})
			lim, err := callcenter.NewLimiter(callcenter.LimiterConfig{Share: tc.share, Window: window})
			if err != nil {
				t.Fatal(err)
			}
			reserve := plan - int(tc.share*plan)
			ctx := testCtx(t, 90*time.Second)
			var (
				next, ok atomic.Int64
				wg       sync.WaitGroup
				probes   []*probe
				errMu    sync.Mutex
				errs     []error
			)
			start := time.Now()
			for range clients {
				c, p := e.client(t, simAdminKey, callcenter.WithLimiter(lim))
				probes = append(probes, p)
				for range workers {
					wg.Go(func() {
						for next.Add(1) <= int64(tc.requests) {
							_, err := c.ListUserStatuses(ctx, callcenter.ListOptions{})
							if p.keep(err) != nil {
								errMu.Lock()
								errs = append(errs, err)
								errMu.Unlock()
								continue
							}
							ok.Add(1)
						}
					})
				}
			}
			wg.Wait()
			elapsed := time.Since(start)

			if len(errs) > 0 {
				t.Errorf("%d requests failed, first: %v", len(errs), errs[0])
			}
			if ok.Load() != int64(tc.requests) {
				t.Errorf("%d requests succeeded, want %d", ok.Load(), tc.requests)
			}
			attempts, throttled, minRemaining := 0, 0, plan
			for _, p := range probes {
				for _, ri := range p.attempts() {
					attempts++
					if ri.Status == http.StatusTooManyRequests {
						throttled++
					}
					if ri.Rate.Remaining >= 0 {
						minRemaining = min(minRemaining, ri.Rate.Remaining)
					}
				}
			}
			if throttled != 0 {
				t.Errorf("%d responses were 429, want none", throttled)
			}
			if attempts != tc.requests {
				t.Errorf("%d attempts for %d requests, want no retries", attempts, tc.requests)
			}
			if minRemaining < reserve {
				t.Errorf("the server's remaining fell to %d: below the reserve of %d", minRemaining, reserve)
			}
			st := lim.Stats()
			if st.Limit != plan || st.Reserve != reserve || st.Throttled != 0 || st.Acquired != uint64(tc.requests) {
				t.Errorf("limiter stats %+v", st)
			}
			budget := plan - reserve
			t.Logf("%d requests at %d per window: %v, about %.1f windows (at least %d expected); min remaining %d; %d waits",
				tc.requests, budget, elapsed.Round(time.Millisecond), elapsed.Seconds()/window.Seconds(),
				(tc.requests+budget-1)/budget-1, minRemaining, st.Waits)
		})
	}
}

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

// TestSimDrift reads users, calls and metrics from a server that uses every drift
// variant and an offset on every record: all decode, directions are lower case and
// every time is UTC.
func TestSimDrift(t *testing.T) {
	e := newSimEnv(t, sim.Config{Backlog: 40, Drift: 1, OffsetRate: 1})
	e.sim.Advance(30 * time.Minute)
	c, p := e.client(t, simAdminKey)
	ctx := testCtx(t, 30*time.Second)
	utc := func(what string, tm time.Time) {
		t.Helper()
		if tm.Location() != time.UTC {
			t.Errorf("%s %v is not in UTC", what, tm)
		}
	}
	stats := e.sim.Stats()

	var users []callcenter.User
	for u, err := range c.AllUsers(ctx, callcenter.ListOptions{PerPage: 6}) {
		must(t, p, "all users", err)
		users = append(users, u)
	}
	if len(users) != stats.Users {
		t.Errorf("%d users, want %d", len(users), stats.Users)
	}
	for _, u := range users {
		if u.ID <= 0 || u.Role == "" {
			t.Errorf("user %+v", u)
		}
		for _, tm := range []*time.Time{u.LastCallTime, u.LastSeenTime} {
			if tm != nil {
				utc(fmt.Sprintf("user %d time", u.ID), *tm)
			}
		}
	}

	var calls []callcenter.Call
	raw := ""
	for call, err := range c.AllCalls(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: 7}}) {
		must(t, p, "all calls", err)
		calls = append(calls, call)
		raw += string(call.Raw)
	}
	if ids := sorted(callIDs(calls)); len(ids) != stats.Calls || len(slices.Compact(ids)) != stats.Calls {
		t.Errorf("%d calls (%d distinct), want %d", len(calls), len(slices.Compact(sorted(callIDs(calls)))), stats.Calls)
	}
	for _, call := range calls {
		if call.ID <= 0 || (call.Direction != callcenter.DirectionIncoming && call.Direction != callcenter.DirectionOutgoing) {
			t.Errorf("call %d direction %q", call.ID, call.Direction)
		}
		utc(fmt.Sprintf("call %d created", call.ID), call.CreatedTime)
		utc(fmt.Sprintf("call %d updated", call.ID), call.UpdatedTime)
		for _, part := range call.Participants {
			if part.CallID != call.ID {
				t.Errorf("participant %d of call %d: call_id %d", part.ID, call.ID, part.CallID)
			}
			utc(fmt.Sprintf("participant %d created", part.ID), part.CreatedTime)
			utc(fmt.Sprintf("participant %d updated", part.ID), part.UpdatedTime)
			if part.EnqueuedTime != nil {
				utc(fmt.Sprintf("participant %d enqueued", part.ID), *part.EnqueuedTime)
			}
		}
	}
	// The variants were really served.
	for _, want := range []string{`"id":"`, `"direction":"Incoming"`, `+05:30"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("no call body holds %s: drift not exercised", want)
		}
	}

	metrics, events := 0, 0
	o := callcenter.ListCallMetricsOptions{IncludeLifeCycle: true}
	o.PerPage = 9
	for m, err := range c.AllCallMetrics(ctx, o) {
		must(t, p, "all call metrics", err)
		metrics++
		utc(fmt.Sprintf("metric %d created", m.ID), m.CreatedTime)
		utc(fmt.Sprintf("metric %d updated", m.ID), m.UpdatedTime)
		for _, ev := range m.LifeCycle {
			events++
			if ev.Timestamp.IsZero() {
				t.Errorf("metric %d: event %q without a time", m.ID, ev.Type)
			}
			utc(fmt.Sprintf("metric %d event %s", m.ID, ev.Type), ev.Timestamp)
		}
	}
	if metrics != stats.Calls || events == 0 {
		t.Errorf("%d metrics with %d life-cycle events, want %d metrics and some events", metrics, events, stats.Calls)
	}
}

// TestSimErrorsNeverRevealKey provokes every kind of failure and checks that no
// error holds the API key (every other test checks the errors it saw, too).
func TestSimErrorsNeverRevealKey(t *testing.T) {
	e := newOpsEnv(t)
	ctx := testCtx(t, 30*time.Second)
	noRetry := callcenter.WithRetryPolicy(callcenter.RetryPolicy{MaxElapsedTime: -1, MaxDecodeRetries: -1})
	admin, _ := e.client(t, simAdminKey)
	agent, _ := e.client(t, simAgentKey)
	wrong, _ := e.client(t, simWrongKey)

	faulty := newSimEnv(t, sim.Config{ErrorRate: 1})
	failing, _ := faulty.client(t, simAdminKey, noRetry)
	cut := newSimEnv(t, sim.Config{MalformedRate: 1})
	truncated, _ := cut.client(t, simAdminKey, noRetry)
	// Plan 1: a first client spends the budget, a second (its own limiter, as another
	// integration would have) meets the 429.
	tight := newSimEnv(t, sim.Config{Plan: 1, RateWindow: time.Hour, RetryAfter: sim.RetryAlways})
	spender, _ := tight.client(t, simAdminKey)
	if _, err := spender.GetUser(ctx, 1); err != nil {
		t.Fatalf("spend the budget: %v", err)
	}
	throttled, _ := tight.client(t, simAdminKey, noRetry)
	gone := newSimEnv(t, sim.Config{})
	unreachable, _ := gone.client(t, simAdminKey, noRetry)
	gone.srv.Close()
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name  string
		call  func() error
		check func(error) bool
	}{
		{"401", func() error { _, err := wrong.ListUsers(ctx, callcenter.ListOptions{}); return err }, callcenter.IsUnauthorized},
		{"403", func() error {
			_, err := agent.Export(ctx, callcenter.ExportRequest{Resources: []callcenter.ExportResource{{Name: callcenter.ExportUsers}}, OutputFormat: callcenter.FormatJSON})
			return err
		}, callcenter.IsForbidden},
		{"404", func() error { _, err := admin.GetUser(ctx, 9999); return err }, callcenter.IsNotFound},
		{"422", func() error {
			_, err := admin.UpdateUser(ctx, 2, callcenter.UpdateUserRequest{Preference: ptrTo(callcenter.UserAfterCallWork)})
			return err
		}, callcenter.IsValidation},
		{"refused by the client", func() error {
			_, err := admin.CreateUser(ctx, callcenter.CreateUserRequest{Email: "not an address", Role: "Janitor"})
			return err
		}, callcenter.IsValidation},
		{"429", func() error { _, err := throttled.GetUser(ctx, 1); return err }, callcenter.IsRateLimited},
		{"5xx", func() error { _, err := failing.GetUser(ctx, 1); return err }, func(err error) bool {
			var ae *callcenter.APIError
			return errors.As(err, &ae) && ae.Status >= 500
		}},
		{"malformed body", func() error { _, err := truncated.ListUsers(ctx, callcenter.ListOptions{}); return err }, func(err error) bool {
			return errors.Is(err, callcenter.ErrMalformedResponse)
		}},
		{"network", func() error { _, err := unreachable.GetUser(ctx, 1); return err }, func(err error) bool { return err != nil }},
		{"canceled", func() error { _, err := admin.GetUser(canceled, 1); return err }, func(err error) bool {
			return errors.Is(err, context.Canceled)
		}},
	}
	var errs []error
	for _, tc := range tests {
		err := tc.call()
		if !tc.check(err) {
			t.Errorf("%s: err %v is not the failure expected", tc.name, err)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != len(tests) {
		t.Errorf("%d errors from %d failing calls", len(errs), len(tests))
	}
	assertNoKeys(t, errs)
}
