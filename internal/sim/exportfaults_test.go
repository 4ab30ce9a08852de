package sim

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestJobScript: scripted jobs fail (status "failed") and stall (zip_in_progress
// for good) in turn; the next job completes.
func TestJobScript(t *testing.T) {
	s := newTestSim(t, Config{CallRate: -1, Jobs: []JobOutcome{JobFails, JobStalls}})
	body := map[string]any{"output_format": "json", "resources": []any{map[string]any{"name": "users"}}}
	var ids []int64
	for range 2 {
		r := do(t, s, "POST", "/api/v1/account/export", testKey, body)
		if r.code != 202 {
			t.Fatalf("export: %d", r.code)
		}
		ids = append(ids, num(t, r.obj(t)["id"]))
	}
	s.Advance(time.Hour)
	for i, want := range []string{"failed", "zip_in_progress"} {
		job := get(t, s, fmt.Sprintf("/api/v1/jobs/%d", ids[i]), 200).obj(t)["bulk_job"].(map[string]any)
		if job["status"] != want || job["job_data"].(map[string]any)["path"] != nil {
			t.Errorf("job %d: %v, want %s without a path", ids[i], job, want)
		}
	}
	runExport(t, s, body) // the third completes
}

// TestReportFaults: a report serves the picked calls poisoned or twice (an
// older copy after the current one), and an odd zip puts a manifest and a
// resource fork before the report.
func TestReportFaults(t *testing.T) {
	s := newTestSim(t, Config{History: 400, HistorySpan: 10 * 24 * time.Hour, ZipReports: true,
		Reports: ReportFaults{PoisonRate: 0.05, DuplicateRate: 0.05, OddZip: true}})
	body := map[string]any{"output_format": "json", "date_range": map[string]any{
		"start_date": testStart.AddDate(0, 0, -20).Format(time.RFC3339), "end_date": testStart.Format(time.RFC3339)},
		"resources": []any{map[string]any{"name": "calls", "include": []string{"participants"}}}}
	_, rep := runExport(t, s, body)
	z, err := zip.NewReader(bytes.NewReader(rep.body), int64(len(rep.body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "manifest.json __MACOSX/export/._calls.json export/calls.json" {
		t.Fatalf("entries %v", names)
	}
	f, err := z.File[2].Open()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := historyDoc(t, doc, false)
	seen := map[int64]int{}
	poisoned, twice := 0, 0
	for i, c := range calls {
		id := int64(c["id"].(float64))
		seen[id]++
		parts := c["participants"].([]any)
		bad := len(parts) > 0 && parts[0].(map[string]any)["enqueued_time"] == poisonDate
		if bad != s.PoisonedInReports(id) {
			t.Errorf("call %d: poisoned %v, want %v", id, bad, !bad)
		}
		if bad && seen[id] == 1 {
			poisoned++
		}
		if seen[id] == 2 {
			twice++
			if calls[i-1]["id"] != c["id"] || c["updated_time"] != c["created_time"] {
				t.Errorf("call %d: the second copy is not an older one right after the first", id)
			}
		}
	}
	for id, n := range seen {
		if want := map[bool]int{false: 1, true: 2}[s.DuplicatedInReports(id)]; n != want {
			t.Errorf("call %d listed %d times, want %d", id, n, want)
		}
	}
	if poisoned == 0 || twice == 0 {
		t.Errorf("%d calls poisoned, %d listed twice: want some of each", poisoned, twice)
	}
}
