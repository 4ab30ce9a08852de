package callcenter

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestExportAndWait(t *testing.T) {
	req := ExportRequest{Resources: []ExportResource{{Name: ExportUsers}}, OutputFormat: FormatCSV}
	job := func(status, path string) string {
		data := "null"
		if path != "" {
			data = fmt.Sprintf(`{"path":%q}`, path)
		}
		return fmt.Sprintf(`{"bulk_job":{"id":17,"status":%q,"job_data":%s}}`, status, data)
	}
	tests := []struct {
		name     string
		statuses []string // job status per poll; "completed" carries a path unless "completed-nopath"
		wantPath string
		wantErr  string
		maxWait  time.Duration
	}{
		{name: "completes", statuses: []string{JobStarted, JobZipInProgress, JobCompleted}, wantPath: "https://files.example/17.zip"},
		{name: "unknown status", statuses: []string{JobStarted, "failed"}, wantErr: `export job 17: export job failed: status "failed"`},
		{name: "completed without path", statuses: []string{"completed-nopath"}, wantErr: "export job failed: completed without a report path"},
		// The first poll sees zip_in_progress (progress): the bound counts from it.
		{name: "stalls", statuses: []string{JobZipInProgress}, maxWait: 2 * time.Minute, wantErr: `still "zip_in_progress" after 2m0s without progress`},
		// Three polls in started, then zip_in_progress for good: the bound counts
		// from the fourth poll, not from the export.
		{name: "stalls after progress", statuses: []string{JobStarted, JobStarted, JobStarted, JobZipInProgress},
			maxWait: 2 * time.Minute, wantErr: `still "zip_in_progress" after 2m0s without progress`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, newFakeClock(), func(n int, w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					reply(w, 202, `{"id":17,"status":"started","message":"ok"}`)
					return
				}
				st := tt.statuses[min(n-1, len(tt.statuses))-1]
				switch st {
				case JobCompleted:
					reply(w, 200, job(st, "https://files.example/17.zip"))
				case "completed-nopath":
					reply(w, 200, job(JobCompleted, ""))
				default:
					reply(w, 200, job(st, ""))
				}
			})
			c := newTestClient(t, s)
			var polls int
			path, err := c.ExportAndWait(t.Context(), req, ExportWait{MaxWait: tt.maxWait, OnPoll: func(Job) { polls++ }})
			if path != tt.wantPath {
				t.Errorf("path %q, want %q", path, tt.wantPath)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			stalls := strings.HasPrefix(tt.name, "stalls")
			if stalls && !errors.Is(err, ErrJobStalled) {
				t.Errorf("stall error %v is not ErrJobStalled", err)
			}
			if strings.Contains(tt.wantErr, "failed") && !errors.Is(err, ErrJobFailed) {
				t.Errorf("failure %v is not ErrJobFailed", err)
			}
			reqs := s.requests()
			if reqs[0].method != http.MethodPost || reqs[0].path != "/api/v1/account/export" {
				t.Errorf("first request %s %s", reqs[0].method, reqs[0].path)
			}
			for _, r := range reqs[1:] {
				if r.method != http.MethodGet || r.path != "/api/v1/jobs/17" {
					t.Errorf("poll %s %s", r.method, r.path)
				}
			}
			if polls != len(reqs)-1 {
				t.Errorf("%d polls seen, %d made", polls, len(reqs)-1)
			}
			if stalls {
				progress := reqs[len(tt.statuses)].at // the poll that saw the last change of status
				if last := reqs[len(reqs)-1].at.Sub(progress); last > 2*time.Minute || last < 2*time.Minute-time.Second {
					t.Errorf("last poll %v after the last progress, want at the deadline", last)
				}
			}
		})
	}
}

func TestExportAndWaitFailures(t *testing.T) {
	req := ExportRequest{Resources: []ExportResource{{Name: ExportTeams}}, OutputFormat: FormatJSON}
	s := newServer(t, newFakeClock(), func(_ int, w http.ResponseWriter, _ *http.Request) {
		reply(w, 403, `{"error_type":"forbidden","message":"Forbidden"}`)
	})
	c := newTestClient(t, s)
	if _, err := c.ExportAndWait(t.Context(), req, ExportWait{}); !IsForbidden(err) {
		t.Errorf("export by a non-admin: %v", err)
	}
	s2 := newServer(t, newFakeClock(), func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			reply(w, 202, `{"id":17,"status":"started"}`)
			return
		}
		reply(w, 404, `{"error_type":"record_not_found","message":"Job not found"}`)
	})
	c2 := newTestClient(t, s2)
	if _, err := c2.ExportAndWait(t.Context(), req, ExportWait{}); !IsNotFound(err) || !strings.HasPrefix(err.Error(), "export job 17: get job 17: ") {
		t.Errorf("job gone: %v", err)
	}
	if _, err := c2.ExportAndWait(t.Context(), ExportRequest{}, ExportWait{}); !IsValidation(err) {
		t.Errorf("invalid request: %v", err)
	}
}
