package callcenter_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/secret"
	"github.com/callbus/callbus/internal/sim"
)

// FuzzListReaders serves one body to every request of the list readers (CallsSince,
// CallMetricsSince, the users and teams pages): whatever the body, no reader panics
// or runs away (each finishes well within its deadline), and every record handed
// on has an id (fuzz with a small -fuzzminimizetime: each input starts a
// server). Seeds are pages of a simulator with every drift variant and the
// hostile faults, and bodies without meta, with absurd meta, and full pages.
func FuzzListReaders(f *testing.F) {
	for _, b := range simBodies(f) {
		f.Add(b)
	}
	for _, s := range []string{
		`{"calls":[]}`, `{"calls":null}`, `[]`, `null`, `{}`, `{"meta":{"total_pages":-1}}`,
		`{"calls":[{"id":1,"created_time":"2025-03-01T09:00:00Z","updated_time":"2025-03-01T09:00:00Z"}],"meta":{"total_count":-5,"total_pages":2147483647}}`,
		`{"calls":[{"id":1},{"id":"x"},{"id":2,"created_time":"0000-00-00 00:00:00"}],"meta":{"total_count":3}}`,
		`{"call_metrics":[{"call_id":3,"created_time":"2025-03-01T09:00:01Z"}]}`,
		`{"users":[{"id":1},{"id":null}],"meta":{"total_pages":1000000}}`, `{"teams":[{"id":2,"users":[5]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var requests atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			requests.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}))
		defer srv.Close()
		c, err := callcenter.New(srv.URL, secret.New("fuzz-key"),
			callcenter.WithRetryPolicy(callcenter.RetryPolicy{InitialInterval: time.Microsecond, MaxInterval: time.Microsecond,
				MaxElapsedTime: 50 * time.Millisecond, MaxDecodeRetries: -1}),
			callcenter.WithRejectionHook(func(callcenter.Rejection) {}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		readAll(ctx, t, c)
		if ctx.Err() != nil {
			t.Fatalf("the readers ran for 20s on one body (%d requests): a runaway loop", requests.Load())
		}
	})
}

// readAll runs every list reader once over a 10 s window.
func readAll(ctx context.Context, t *testing.T, c *callcenter.Client) {
	from := simStart
	w := callcenter.TimeWindow{From: from, To: from.Add(10 * time.Second)}
	_ = c.CallsSince(ctx, callcenter.ListCallsOptions{ListOptions: callcenter.ListOptions{PerPage: 2}, ByTime: w},
		func(cs []events.Call) error {
			for _, x := range cs {
				if x.ID <= 0 {
					t.Errorf("call without an id handed on: %+v", x)
				}
			}
			return nil
		})
	_ = c.CallMetricsSince(ctx, callcenter.ListCallMetricsOptions{ListOptions: callcenter.ListOptions{PerPage: 2}, ByTime: w},
		func(ms []events.CallMetric) error {
			for _, m := range ms {
				if m.CallID <= 0 {
					t.Errorf("metric without a call id handed on: %+v", m)
				}
			}
			return nil
		})
	for u, err := range c.AllUsers(ctx, callcenter.ListOptions{PerPage: 2}) {
		if err == nil && u.ID <= 0 {
			t.Errorf("user without an id: %+v", u)
		}
	}
	for tm, err := range c.AllTeams(ctx, callcenter.ListOptions{PerPage: 2}) {
		if err == nil && tm.ID <= 0 {
			t.Errorf("team without an id: %+v", tm)
		}
	}
}

// simBodies returns list pages of a simulator with every drift variant, offsets
// and the hostile faults.
func simBodies(f *testing.F) [][]byte {
	e := newSimEnv(f, sim.Config{Backlog: 20, Drift: 1, OffsetRate: 1, Hostile: sim.HostileFaults()})
	e.sim.Advance(20 * time.Minute)
	var out [][]byte
	for _, path := range []string{"/calls?per_page=3", "/call_metrics?per_page=3&include=life_cycle", "/users?per_page=3", "/teams"} {
		req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/api/v1"+path, nil)
		if err != nil {
			f.Fatal(err)
		}
		req.Header.Set("X-Api-Auth", simAdminKey)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		out = append(out, b)
	}
	return out
}
