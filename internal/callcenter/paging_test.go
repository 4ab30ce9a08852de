package callcenter

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// callsJSON returns n calls with ids from first.
func callsJSON(first, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"id":%d,"direction":"incoming","created_time":"2024-03-05T10:00:00Z","updated_time":"2024-03-05T10:00:00Z"}`, first+i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestPagingTermination(t *testing.T) {
	tests := []struct {
		name      string
		perPage   int
		page      func(page, perPage int) string // response body of a page
		wantIDs   int
		wantPages int // requests made
		wantErr   string
	}{
		{name: "total pages", perPage: 2, wantIDs: 6, wantPages: 3,
			page: func(p, pp int) string {
				return fmt.Sprintf(`{"calls":%s,"meta":{"total_count":6,"total_pages":3,"current":%d}}`, callsJSON((p-1)*pp+1, pp), p)
			}},
		{name: "total pages with short pages", perPage: 3, wantIDs: 4, wantPages: 2,
			page: func(p, pp int) string {
				return fmt.Sprintf(`{"calls":%s,"meta":{"total_count":4,"total_pages":2,"current":%d}}`, callsJSON((p-1)*pp+1, 2), p)
			}},
		{name: "meta says more but page empty", perPage: 2, wantIDs: 2, wantPages: 2,
			page: func(p, pp int) string {
				if p > 1 {
					return `{"calls":[],"meta":{"total_count":4,"total_pages":2,"current":2}}`
				}
				return `{"calls":` + callsJSON(1, 2) + `,"meta":{"total_count":4,"total_pages":2,"current":1}}`
			}},
		{name: "no meta, short last page", perPage: 2, wantIDs: 5, wantPages: 3,
			page: func(p, pp int) string { return `{"calls":` + callsJSON((p-1)*pp+1, min(pp, 5-(p-1)*pp)) + `}` }},
		{name: "no meta, empty page ends", perPage: 2, wantIDs: 4, wantPages: 3,
			page: func(p, pp int) string { return `{"calls":` + callsJSON((p-1)*pp+1, max(0, min(pp, 4-(p-1)*pp))) + `}` }},
		{name: "bare array", perPage: 3, wantIDs: 3, wantPages: 2,
			page: func(p, pp int) string { return callsJSON((p-1)*pp+1, max(0, min(pp, 3-(p-1)*pp))) }},
		{name: "first page empty", perPage: 10, wantIDs: 0, wantPages: 1,
			page: func(int, int) string { return `{"calls":[]}` }},
		{name: "page ignored", perPage: 2, wantIDs: 2, wantPages: 2, wantErr: "page 2 repeats page 1",
			page: func(int, int) string { return `{"calls":` + callsJSON(1, 2) + `}` }},
		{name: "bad page", perPage: 2, wantIDs: 2, wantPages: 2, wantErr: "list calls page 2: HTTP 404",
			page: func(p, _ int) string {
				if p == 2 {
					return "404"
				}
				return `{"calls":` + callsJSON(1, 2) + `}`
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, r *http.Request) {
				p, _ := strconv.Atoi(r.URL.Query().Get("page"))
				pp, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
				body := tt.page(p, pp)
				if body == "404" {
					reply(w, 404, `{"error_type":"record_not_found","message":"no page"}`)
					return
				}
				reply(w, 200, body)
			})
			c := newTestClient(t, s)
			var o ListCallsOptions
			o.PerPage = tt.perPage
			ids := map[int64]bool{}
			var err error
			for call, e := range c.AllCalls(t.Context(), o) {
				if e != nil {
					err = e
					continue
				}
				ids[call.ID] = true
			}
			if len(ids) != tt.wantIDs || s.count() != tt.wantPages {
				t.Errorf("%d ids in %d requests, want %d in %d", len(ids), s.count(), tt.wantIDs, tt.wantPages)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			for i, r := range s.requests() {
				if r.query["page"][0] != strconv.Itoa(i+1) || r.query["per_page"][0] != strconv.Itoa(tt.perPage) {
					t.Errorf("request %d query %v", i, r.query)
				}
			}
		})
	}
}

func TestPagingDefaultsAndBreak(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, r *http.Request) {
		reply(w, 200, usersJSON(r.URL.Query().Get("page"), 1000))
	})
	c := newTestClient(t, s)
	n := 0
	for _, err := range c.AllUsers(t.Context(), ListOptions{Page: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1500 {
			break
		}
	}
	reqs := s.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests after break, want 2", len(reqs))
	}
	if reqs[0].query["per_page"][0] != "1000" || reqs[0].query["page"][0] != "3" || reqs[1].query["page"][0] != "4" {
		t.Errorf("queries %v %v", reqs[0].query, reqs[1].query)
	}
}

// usersJSON returns a page of n users whose ids derive from the page number.
func usersJSON(page string, n int) string {
	p, _ := strconv.Atoi(page)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"id":%d}`, p*100000+i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestPagesYieldsPages(t *testing.T) {
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, r *http.Request) {
		p := r.URL.Query().Get("page")
		reply(w, 200, `{"call_metrics":[{"id":`+p+`}],"meta":{"total_count":2,"total_pages":2,"current":`+p+`}}`,
			"X-RateLimit-Total", "100", "X-RateLimit-Remaining", "97", "X-RateLimit-Used-CurrentRequest", "1")
	})
	c := newTestClient(t, s)
	var nums []int
	for p, err := range c.CallMetricsPages(t.Context(), ListCallMetricsOptions{IncludeLifeCycle: true}) {
		if err != nil {
			t.Fatal(err)
		}
		nums = append(nums, p.Number)
		if p.Rate.Total != 100 || p.Rate.Remaining != 97 || p.Rate.Used != 1 || !p.Rate.Known() {
			t.Errorf("rate %+v", p.Rate)
		}
	}
	if fmt.Sprint(nums) != "[1 2]" {
		t.Errorf("pages %v", nums)
	}
	if r := c.RateLimit(); r.Remaining != 97 || r.Observed.IsZero() {
		t.Errorf("client rate %+v", r)
	}
}

func TestPageIsLast(t *testing.T) {
	tests := []struct {
		name string
		p    Page[int]
		want bool
	}{
		{"empty", Page[int]{Number: 1, PerPage: 10}, true},
		{"meta last", Page[int]{Items: []int{1}, Meta: &Meta{TotalPages: 3}, Number: 3, PerPage: 1}, true},
		{"meta more", Page[int]{Items: []int{1}, Meta: &Meta{TotalPages: 3}, Number: 2, PerPage: 5}, false},
		{"meta zero falls back", Page[int]{Items: []int{1}, Meta: &Meta{}, Number: 1, PerPage: 5}, true},
		{"short", Page[int]{Items: []int{1, 2}, Number: 1, PerPage: 5}, true},
		{"full", Page[int]{Items: []int{1, 2}, Number: 1, PerPage: 2}, false},
		{"server default size", Page[int]{Items: make([]int, 10), Number: 1}, false},
	}
	for _, tt := range tests {
		if got := tt.p.IsLast(); got != tt.want {
			t.Errorf("%s: IsLast = %v", tt.name, got)
		}
	}
}
