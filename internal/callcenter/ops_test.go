package callcenter

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/callbus/callbus/events"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestOperations(t *testing.T) {
	from := time.Date(2024, 3, 5, 11, 0, 0, 500_000_000, time.FixedZone("+01", 3600))
	to := time.Date(2024, 3, 5, 11, 0, 0, 0, time.UTC)
	exportReq := ExportRequest{
		DateRange:    &DateRange{StartDate: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), EndDate: time.Date(2024, 2, 1, 0, 0, 0, 0, time.FixedZone("-05", -5*3600))},
		Resources:    []ExportResource{{Name: ExportCalls, Include: []string{IncludeParticipants, IncludeRecording}}, {Name: ExportUsers}},
		OutputFormat: FormatJSON,
		DeliveryType: DeliveryEmail,
	}
	tests := []struct {
		name     string
		call     func(ctx context.Context, c *Client) (any, error)
		status   int
		respBody string
		respHdr  []string
		method   string
		path     string
		query    map[string][]string
		body     string // JSON; "" when none
		check    func(t *testing.T, got any)
	}{
		{name: "list users", status: 200, respBody: "[" + string(fixture(t, "user.json")) + "]",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListUsers(ctx, ListOptions{Page: 2, PerPage: 50})
			},
			method: "GET", path: "/api/v1/users", query: map[string][]string{"page": {"2"}, "per_page": {"50"}},
			check: func(t *testing.T, got any) {
				p := got.(Page[events.User])
				if len(p.Items) != 1 || p.Items[0].ID != 7 || p.Meta != nil || p.Number != 2 || p.PerPage != 50 {
					t.Errorf("page %+v", p)
				}
			}},
		{name: "create user", status: 201, respBody: string(fixture(t, "user.json")),
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateUser(ctx, CreateUserRequest{Email: "ada@acme.example", Role: events.RoleAgent})
			},
			method: "POST", path: "/api/v1/users", body: `{"email":"ada@acme.example","role":"Agent"}`,
			check: func(t *testing.T, got any) {
				if u := got.(events.User); u.ID != 7 || len(u.Raw) == 0 {
					t.Errorf("user %+v", u)
				}
			}},
		{name: "get user", status: 200, respBody: string(fixture(t, "user_drift.json")),
			call:   func(ctx context.Context, c *Client) (any, error) { return c.GetUser(ctx, 8) },
			method: "GET", path: "/api/v1/users/8",
			check: func(t *testing.T, got any) {
				if u := got.(events.User); u.ID != 8 || u.Role != events.RoleSupervisor {
					t.Errorf("user %+v", u)
				}
			}},
		{name: "update user", status: 200, respBody: string(fixture(t, "user.json")),
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateUser(ctx, 7, UpdateUserRequest{Role: ptr(events.RoleAdmin), Preference: ptr(1), Deleted: ptr(false)})
			},
			method: "PUT", path: "/api/v1/users/7", body: `{"role":"Admin","preference":1,"deleted":false}`},
		{name: "list user statuses", status: 200, respBody: string(fixture(t, "user_statuses.json")),
			call:   func(ctx context.Context, c *Client) (any, error) { return c.ListUserStatuses(ctx, ListOptions{}) },
			method: "GET", path: "/api/v1/user-statuses", query: map[string][]string{},
			check: func(t *testing.T, got any) {
				if p := got.(Page[UserStatus]); len(p.Items) != 3 || p.Items[1].Enabled != 1 {
					t.Errorf("page %+v", p)
				}
			}},
		{name: "list teams", status: 200, respBody: "[" + string(fixture(t, "team.json")) + "]",
			call:   func(ctx context.Context, c *Client) (any, error) { return c.ListTeams(ctx, ListOptions{PerPage: 1000}) },
			method: "GET", path: "/api/v1/teams", query: map[string][]string{"per_page": {"1000"}}},
		{name: "create team", status: 201, respBody: string(fixture(t, "team.json")),
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateTeam(ctx, TeamRequest{Name: ptr("Support"), Users: []events.UserRef{{ID: 7}, {ID: 8}}})
			},
			method: "POST", path: "/api/v1/teams", body: `{"name":"Support","users":[{"id":7},{"id":8}]}`,
			check: func(t *testing.T, got any) {
				if tm := got.(events.Team); tm.ID != 2 || len(tm.Users) != 2 {
					t.Errorf("team %+v", tm)
				}
			}},
		{name: "get team", status: 200, respBody: string(fixture(t, "team.json")),
			call:   func(ctx context.Context, c *Client) (any, error) { return c.GetTeam(ctx, 2) },
			method: "GET", path: "/api/v1/teams/2"},
		{name: "update team", status: 200, respBody: string(fixture(t, "team.json")),
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateTeam(ctx, 2, TeamRequest{Description: ptr("x"), Users: []events.UserRef{}})
			},
			method: "PUT", path: "/api/v1/teams/2", body: `{"description":"x","users":[]}`},
		{name: "list calls", status: 200, respBody: string(fixture(t, "calls_page.json")),
			call: func(ctx context.Context, c *Client) (any, error) {
				o := ListCallsOptions{ByTime: TimeWindow{From: from, To: to.Add(1500 * time.Millisecond)}}
				o.Page, o.PerPage = 3, 1000
				return c.ListCalls(ctx, o)
			},
			method: "GET", path: "/api/v1/calls",
			query: map[string][]string{"page": {"3"}, "per_page": {"1000"}, "by_time[from]": {"2024-03-05T10:00:00Z"}, "by_time[to]": {"2024-03-05T11:00:02Z"}},
			check: func(t *testing.T, got any) {
				if p := got.(Page[events.Call]); len(p.Items) != 2 || p.Meta == nil || p.Meta.TotalPages != 6 {
					t.Errorf("page %+v", p)
				}
			}},
		{name: "get call", status: 200, respBody: string(fixture(t, "call.json")),
			call:   func(ctx context.Context, c *Client) (any, error) { return c.GetCall(ctx, 812) },
			method: "GET", path: "/api/v1/calls/812",
			check: func(t *testing.T, got any) {
				if c := got.(events.Call); c.ID != 812 || len(c.Participants) != 2 {
					t.Errorf("call %+v", c)
				}
			}},
		{name: "list call metrics", status: 200, respBody: string(fixture(t, "call_metrics_page.json")),
			call: func(ctx context.Context, c *Client) (any, error) {
				o := ListCallMetricsOptions{ByTime: TimeWindow{From: to.Add(-time.Hour), To: to}, IncludeLifeCycle: true}
				o.PerPage = 100
				return c.ListCallMetrics(ctx, o)
			},
			method: "GET", path: "/api/v1/call_metrics",
			query: map[string][]string{"per_page": {"100"}, "include": {"life_cycle"}, "by_time[from]": {"2024-03-05T10:00:00Z"}, "by_time[to]": {"2024-03-05T11:00:00Z"}},
			check: func(t *testing.T, got any) {
				if p := got.(Page[events.CallMetric]); len(p.Items) != 1 || len(p.Items[0].LifeCycle) != 1 || !p.IsLast() {
					t.Errorf("page %+v", p)
				}
			}},
		{name: "get call metric", status: 200, respBody: string(fixture(t, "call_metric.json")),
			call:   func(ctx context.Context, c *Client) (any, error) { return c.GetCallMetric(ctx, 812) },
			method: "GET", path: "/api/v1/calls/812/call_metrics",
			check: func(t *testing.T, got any) {
				if m := got.(events.CallMetric); m.ID != 900 || len(m.LifeCycle) != 4 {
					t.Errorf("metric %+v", m)
				}
			}},
		{name: "download recording", status: 302, respHdr: []string{"Location", "https://files.example/rec/44.mp3?sig=abc"},
			call:   func(ctx context.Context, c *Client) (any, error) { return c.DownloadRecording(ctx, 812, 44) },
			method: "GET", path: "/api/v1/calls/812/recording/44",
			check: func(t *testing.T, got any) {
				if got.(string) != "https://files.example/rec/44.mp3?sig=abc" {
					t.Errorf("location %q", got)
				}
			}},
		{name: "delete recording", status: 200, respBody: `{"status": true}`,
			call:   func(ctx context.Context, c *Client) (any, error) { return c.DeleteRecording(ctx, 812, 44) },
			method: "DELETE", path: "/api/v1/calls/812/recording/44",
			check: func(t *testing.T, got any) {
				if !got.(bool) {
					t.Errorf("status false")
				}
			}},
		{name: "export", status: 202, respBody: string(fixture(t, "export_job.json")),
			call:   func(ctx context.Context, c *Client) (any, error) { return c.Export(ctx, exportReq) },
			method: "POST", path: "/api/v1/account/export",
			body: `{"date_range":{"start_date":"2024-01-01T00:00:00Z","end_date":"2024-02-01T05:00:00Z"},` +
				`"resources":[{"name":"calls","include":["participants","recording"]},{"name":"users"}],"output_format":"json","delivery_type":"email"}`,
			check: func(t *testing.T, got any) {
				if j := got.(ExportJob); j.ID != 17 || j.Status != JobStarted {
					t.Errorf("job %+v", j)
				}
			}},
		{name: "get job", status: 200, respBody: string(fixture(t, "job.json")),
			call:   func(ctx context.Context, c *Client) (any, error) { return c.GetJob(ctx, 17) },
			method: "GET", path: "/api/v1/jobs/17",
			check: func(t *testing.T, got any) {
				if j := got.(Job); j.ID != 17 || j.JobData == nil || j.JobData.Path != "https://files.example/reports/17.zip" {
					t.Errorf("job %+v", j)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) {
				reply(w, tt.status, tt.respBody, tt.respHdr...)
			})
			c := newTestClient(t, s)
			got, err := tt.call(t.Context(), c)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.method != tt.method || r.path != tt.path {
				t.Errorf("request %s %s, want %s %s", r.method, r.path, tt.method, tt.path)
			}
			if tt.query != nil && !reflect.DeepEqual(r.query, tt.query) {
				t.Errorf("query %v, want %v", r.query, tt.query)
			}
			if tt.query == nil && len(r.query) != 0 {
				t.Errorf("query %v, want none", r.query)
			}
			checkHeaders(t, r, tt.body != "")
			if tt.body != "" {
				var gotBody, wantBody any
				if err := json.Unmarshal([]byte(r.body), &gotBody); err != nil {
					t.Fatalf("body %q: %v", r.body, err)
				}
				_ = json.Unmarshal([]byte(tt.body), &wantBody)
				if !reflect.DeepEqual(gotBody, wantBody) {
					t.Errorf("body %s, want %s", r.body, tt.body)
				}
			} else if r.body != "" {
				t.Errorf("body %q, want none", r.body)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func checkHeaders(t *testing.T, r seen, hasBody bool) {
	t.Helper()
	want := map[string]string{
		"X-Api-Auth": testKey,
		"Accept":     "application/json",
		"User-Agent": "callbus/1.2.3 (+https://github.com/callbus/callbus)",
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	ct := r.header.Get("Content-Type")
	if hasBody && ct != "application/json" || !hasBody && ct != "" {
		t.Errorf("Content-Type %q with body=%v", ct, hasBody)
	}
}

func TestDownloadRecordingRelativeLocation(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusFound, "", "Location", "/files/rec/44.mp3")
	})
	c := newTestClient(t, s)
	got, err := c.DownloadRecording(t.Context(), 812, 44)
	if err != nil || got != s.URL+"/files/rec/44.mp3" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestDownloadRecordingNot302(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, `{}`)
	})
	c := newTestClient(t, s)
	if _, err := c.DownloadRecording(t.Context(), 812, 44); err == nil {
		t.Fatal("a 200 was taken for a redirect")
	}
	if s.count() != 1 {
		t.Errorf("%d requests, want 1", s.count())
	}
}

func TestBaseURLForms(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) { reply(w, 200, `[]`) })
	for _, base := range []string{s.URL, s.URL + "/", s.URL + "/api/v1", s.URL + "/api/v1/"} {
		c, err := New(base, secretKey(), withClock(s.clk))
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if _, err := c.ListUsers(t.Context(), ListOptions{}); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
	}
	for _, r := range s.requests() {
		if r.path != "/api/v1/users" {
			t.Errorf("path %q", r.path)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://x", "http://x/?a=b", "/api/v1"} {
		if _, err := New(bad, secretKey()); err == nil {
			t.Errorf("base %q accepted", bad)
		}
	}
	if _, err := New(s.URL, secretKeyEmpty()); err == nil {
		t.Error("empty key accepted")
	}
}

// TestRedirectNeverFollowed uses an http.Client whose default policy would follow
// the 302: the client must still return the location without requesting it.
func TestRedirectNeverFollowed(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/files/44.mp3" {
			reply(w, 200, "audio")
			return
		}
		reply(w, http.StatusFound, "", "Location", "/files/44.mp3")
	})
	hc := &http.Client{}
	c := newTestClient(t, s, WithHTTPClient(hc))
	if _, err := c.DownloadRecording(t.Context(), 1, 44); err != nil {
		t.Fatal(err)
	}
	if n := s.count(); n != 1 {
		t.Errorf("%d requests: the redirect was followed", n)
	}
	if hc.CheckRedirect != nil {
		t.Error("the caller's http.Client was modified")
	}
}

func TestRateHeadersOnErrors(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, 404, `{"error_type":"record_not_found","message":"Call not found"}`,
			"X-RateLimit-Total", "200", "X-RateLimit-Remaining", "150", "X-RateLimit-Used-CurrentRequest", "1")
	})
	c := newTestClient(t, s)
	_, err := c.GetCall(t.Context(), 5)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Rate.Total != 200 || ae.Rate.Remaining != 150 || ae.Rate.Used != 1 {
		t.Fatalf("error %v rate %+v", err, ae)
	}
	if r := c.RateLimit(); r.Remaining != 150 || !r.Known() {
		t.Errorf("client rate %+v", r)
	}
	if st := c.Limiter().Stats(); st.Limit != 200 || st.ServerRemaining != 150 {
		t.Errorf("limiter did not learn from the error: %+v", st)
	}
}
