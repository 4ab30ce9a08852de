package callcenter_test

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/sim"
)

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
