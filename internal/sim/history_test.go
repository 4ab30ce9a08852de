package sim

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"
)

// historyDoc decodes a JSON report, zipped or not, into its calls and metrics.
func historyDoc(t *testing.T, body []byte, zipped bool) (calls, metrics []map[string]any) {
	t.Helper()
	if zipped {
		z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if err != nil || len(z.File) != 1 || z.File[0].Name != "report.json" {
			t.Fatalf("zip: %v %v", err, z)
		}
		f, err := z.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(f); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		Calls   []map[string]any `json:"calls"`
		Metrics []map[string]any `json:"call_metrics"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("report: %v", err)
	}
	return doc.Calls, doc.Metrics
}

// TestExportHistory: the lazily generated history is served by reports within
// their date range, before the backlog, identical on every read, zipped or not.
func TestExportHistory(t *testing.T) {
	for _, zipped := range []bool{false, true} {
		s := newTestSim(t, Config{History: 3000, HistorySpan: 90 * 24 * time.Hour, Backlog: 50, ZipReports: zipped})
		ids := s.HistoryCallIDs()
		if len(ids) != 3000 {
			t.Fatalf("%d history ids", len(ids))
		}
		from, to := testStart.AddDate(0, 0, -60), testStart
		body := map[string]any{"output_format": "json", "date_range": map[string]any{
			"start_date": from.Format(time.RFC3339), "end_date": to.Format(time.RFC3339)},
			"resources": []any{map[string]any{"name": "calls", "include": []string{"participants"}},
				map[string]any{"name": "call_metrics"}}}
		_, rep := runExport(t, s, body)
		calls, metrics := historyDoc(t, rep.body, zipped)
		_, again := runExport(t, s, body)
		if !bytes.Equal(rep.body, again.body) && !zipped {
			t.Error("two reports of the same range differ")
		}
		var hist []int64
		for _, c := range calls {
			at, _ := time.Parse(time.RFC3339, c["created_time"].(string))
			if at.Before(from) || at.After(to) {
				t.Fatalf("call %v created %v outside the range", c["id"], at)
			}
			if id := int64(c["id"].(float64)); id >= histCallBase {
				hist = append(hist, id)
			}
		}
		// About two thirds of the 90 days, then the backlog.
		if len(hist) < 1800 || len(hist) > 2200 || len(calls) != len(hist)+50 || len(metrics) != len(calls) {
			t.Fatalf("zip %v: %d calls (%d history), %d metrics", zipped, len(calls), len(hist), len(metrics))
		}
		if !slices.IsSorted(hist) || hist[len(hist)-1] != ids[len(ids)-1] || hist[len(hist)-1]-hist[0] != int64(len(hist)-1) {
			t.Errorf("history ids not the last %d in order: %v…%v", len(hist), hist[0], hist[len(hist)-1])
		}
	}
}
