package sim

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"fmt"
	"net/url"
	"testing"
	"time"
)

// runExport posts body, advances until the job completes and returns the job and
// the downloaded report.
func runExport(t *testing.T, s *Sim, body any) (map[string]any, reply) {
	t.Helper()
	r := do(t, s, "POST", "/api/v1/account/export", testKey, body)
	if r.code != 202 {
		t.Fatalf("export: %d %s", r.code, r.body)
	}
	created := r.obj(t)
	if created["status"] != "started" || created["message"] == "" {
		t.Errorf("created %v", created)
	}
	path := fmt.Sprintf("/api/v1/jobs/%d", num(t, created["id"]))
	seen := []string{}
	var job map[string]any
	for range 60 {
		job = get(t, s, path, 200).obj(t)["bulk_job"].(map[string]any)
		if st := job["status"].(string); len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if job["status"] == "completed" {
			break
		}
		s.Advance(time.Second)
	}
	if fmt.Sprint(seen) != "[started zip_in_progress completed]" {
		t.Fatalf("job statuses %v", seen)
	}
	links := job["links"].([]any)
	if len(links) != 2 || links[0].(map[string]any)["rel"] != "self" {
		t.Errorf("links %v", links)
	}
	p, err := url.Parse(job["job_data"].(map[string]any)["path"].(string))
	if err != nil {
		t.Fatal(err)
	}
	report := do(t, s, "GET", p.Path, "", nil)
	if report.code != 200 {
		t.Fatalf("report %s: %d", p.Path, report.code)
	}
	return job, report
}

func TestExportJSON(t *testing.T) {
	s := newTestSim(t, Config{Backlog: 300})
	s.Advance(30 * time.Minute)
	from := testStart.Add(-3 * time.Hour)
	to := testStart.Add(10 * time.Minute)
	_, rep := runExport(t, s, map[string]any{
		"date_range":    map[string]any{"start_date": from.Format(time.RFC3339), "end_date": to.Format(time.RFC3339)},
		"output_format": "json",
		"resources": []any{
			map[string]any{"name": "calls", "include": []string{"participants", "life_cycle"}},
			map[string]any{"name": "call_metrics"},
			map[string]any{"name": "users"},
			map[string]any{"name": "teams"},
		},
	})
	doc := rep.obj(t)
	calls := doc["calls"].([]any)
	if len(calls) == 0 || len(doc["call_metrics"].([]any)) != len(calls) || len(doc["users"].([]any)) != 20 || len(doc["teams"].([]any)) != 4 {
		t.Fatalf("report sizes: calls %d, metrics %d, users %d, teams %d", len(calls), len(doc["call_metrics"].([]any)),
			len(doc["users"].([]any)), len(doc["teams"].([]any)))
	}
	for _, x := range calls {
		c := x.(map[string]any)
		ct := mustParse(t, c["created_time"].(string))
		if ct.Before(from) || ct.After(to) {
			t.Fatalf("call created %s outside the range", ct)
		}
		if c["recording"] != nil || c["recording_to_redact"] != nil || c["integrated_resources"] != nil {
			t.Fatalf("parts not included but present: %v", c)
		}
		if _, ok := c["participants"].([]any); !ok {
			t.Fatalf("participants included but %v", c["participants"])
		}
		if _, ok := c["life_cycle"].([]any); !ok {
			t.Fatalf("life_cycle included but %v", c["life_cycle"])
		}
	}
	if _, ok := doc["call_metrics"].([]any)[0].(map[string]any)["life_cycle"]; ok {
		t.Error("metric life_cycle without include")
	}
}

func TestExportCSVUsers(t *testing.T) {
	s := newTestSim(t, Config{})
	_, rep := runExport(t, s, map[string]any{"output_format": "csv", "resources": []any{map[string]any{"name": "users"}}})
	z, err := zip.NewReader(bytes.NewReader(rep.body), int64(len(rep.body)))
	if err != nil || len(z.File) != 1 || z.File[0].Name != "users.csv" {
		t.Fatalf("zip: %v %v", err, z)
	}
	f, err := z.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 21 || rows[0][0] != "id" || rows[1][0] != "1" {
		t.Fatalf("csv rows %d: %v %v", len(rows), err, rows[:min(2, len(rows))])
	}
}

func TestExportValidation(t *testing.T) {
	s := newTestSim(t, Config{Keys: []Key{{"agent", RoleAgent}, {"sup", RoleSupervisor}}})
	calls := []any{map[string]any{"name": "calls"}}
	rng := map[string]any{"start_date": "2024-01-01T00:00:00Z", "end_date": "2024-02-01T00:00:00Z"}
	for _, tc := range []struct {
		body   any
		fields []string
	}{
		{map[string]any{"output_format": "json"}, []string{"resources"}},
		{map[string]any{"output_format": "json", "resources": []any{}}, []string{"resources"}},
		{map[string]any{"output_format": "json", "resources": calls}, []string{"date_range"}},
		{map[string]any{"output_format": "csv", "resources": calls, "date_range": rng}, []string{"output_format"}},
		{map[string]any{"output_format": "xml", "resources": []any{map[string]any{"name": "users"}}}, []string{"output_format"}},
		{map[string]any{"resources": []any{map[string]any{"name": "users"}}}, []string{"output_format"}},
		{map[string]any{"output_format": "json", "resources": []any{map[string]any{"name": "agents"}}}, []string{"resources[0].name"}},
		{map[string]any{"output_format": "json", "resources": []any{map[string]any{"name": "users", "include": []string{"teams"}}}}, []string{"resources[0].include"}},
		{map[string]any{"output_format": "json", "date_range": rng, "resources": []any{map[string]any{"name": "call_metrics", "include": []string{"participants"}}}}, []string{"resources[0].include"}},
		{map[string]any{"output_format": "json", "resources": calls, "date_range": map[string]any{"start_date": "2021-01-01T00:00:00Z", "end_date": "2023-06-01T00:00:00Z"}}, []string{"date_range"}},
		{map[string]any{"output_format": "json", "resources": calls, "date_range": map[string]any{"start_date": "2024-03-01T00:00:00Z", "end_date": "2024-01-01T00:00:00Z"}}, []string{"date_range"}},
		{map[string]any{"output_format": "json", "resources": calls, "date_range": map[string]any{"start_date": "soon", "end_date": "2024-01-01T00:00:00Z"}}, []string{"date_range.start_date"}},
		{map[string]any{"output_format": "json", "resources": []any{map[string]any{"name": "users"}}, "delivery_type": "fax"}, []string{"delivery_type"}},
	} {
		wantError(t, do(t, s, "POST", "/api/v1/account/export", testKey, tc.body), 422, "model_validation_failed", tc.fields...)
	}
	ok := map[string]any{"output_format": "json", "resources": []any{map[string]any{"name": "users"}}}
	for _, k := range []string{"agent", "sup"} {
		wantError(t, do(t, s, "POST", "/api/v1/account/export", k, ok), 403, "access_denied")
	}
	wantError(t, do(t, s, "POST", "/api/v1/account/export", testKey, "{"), 400, "invalid_json")
	wantError(t, do(t, s, "GET", "/api/v1/jobs/12", testKey, nil), 404, "record_not_found")
	if s.Stats().Jobs != 0 {
		t.Error("a refused export created a job")
	}
}

func TestReportExpires(t *testing.T) {
	s := newTestSim(t, Config{CallRate: -1})
	job, _ := runExport(t, s, map[string]any{"output_format": "json", "resources": []any{map[string]any{"name": "teams"}}})
	p, _ := url.Parse(job["job_data"].(map[string]any)["path"].(string))
	s.Advance(7*24*time.Hour + time.Minute)
	if r := do(t, s, "GET", p.Path, "", nil); r.code != 404 {
		t.Errorf("report after 7 days: %d", r.code)
	}
}

func TestJobStall(t *testing.T) {
	s := newTestSim(t, Config{JobStallRate: 1, CallRate: -1})
	r := do(t, s, "POST", "/api/v1/account/export", testKey, map[string]any{"output_format": "json",
		"resources": []any{map[string]any{"name": "users"}}})
	if r.code != 202 {
		t.Fatalf("export: %d", r.code)
	}
	s.Advance(time.Hour)
	job := get(t, s, fmt.Sprintf("/api/v1/jobs/%d", num(t, r.obj(t)["id"])), 200).obj(t)["bulk_job"].(map[string]any)
	if job["status"] != "zip_in_progress" || job["job_data"].(map[string]any)["path"] != nil {
		t.Errorf("stalled job %v", job)
	}
}
