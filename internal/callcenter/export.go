package callcenter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// ExportWait bounds ExportAndWait. Zero fields take the defaults shown.
type ExportWait struct {
	// PollInterval is the first wait between job reads (default 500ms); it
	// grows exponentially with jitter up to MaxPollInterval (default 30s). A
	// small export completes in about a second, which a first read at 2 s
	// made the backfill wait for; a large one costs a few reads more.
	PollInterval, MaxPollInterval time.Duration
	// MaxWait bounds the wait without progress (default 30m): a job whose
	// status and updated_time stay the same that long has stalled (field note 9).
	// Each change of either starts the bound again.
	MaxWait time.Duration
	// OnPoll, when set, sees every job read (for progress logs).
	OnPoll func(Job)
}

func (w ExportWait) withDefaults() ExportWait {
	if w.PollInterval <= 0 {
		w.PollInterval = 500 * time.Millisecond
	}
	if w.MaxPollInterval < w.PollInterval {
		w.MaxPollInterval = max(30*time.Second, w.PollInterval)
	}
	if w.MaxWait <= 0 {
		w.MaxWait = 30 * time.Minute
	}
	return w
}

// ErrJobStalled is wrapped by the error of ExportAndWait when the job made no
// progress (status, updated_time) for ExportWait.MaxWait.
var ErrJobStalled = errors.New("export job stalled")

// ErrJobFailed is wrapped by the error of ExportAndWait when the job ended
// without a report: a status other than started, zip_in_progress or completed
// (the spec knows no other, so the job will not complete), or completed without
// a report path. A new export job may succeed where this one failed.
var ErrJobFailed = errors.New("export job failed")

// ExportAndWait starts an export (see Export) and polls its job until it is
// completed, returning the report URL (job_data.path, valid for 7 days). It fails
// when the export or a job read fails (GetJob retries transient errors itself),
// when the job reports a status other than started, zip_in_progress or completed
// or a completed job has no path (ErrJobFailed), when the job makes no progress
// for MaxWait (ErrJobStalled) or when ctx is done. Paged reads remain the fallback for a failed export.
func (c *Client) ExportAndWait(ctx context.Context, req ExportRequest, w ExportWait) (string, error) {
	started, err := c.Export(ctx, req)
	if err != nil {
		return "", err
	}
	if started.ID <= 0 {
		return "", errors.New("export: the response holds no job id")
	}
	return c.WaitJob(ctx, started.ID, started.Status, w)
}

// WaitJob polls export job id (last seen in status) until it is completed and
// returns its report URL, with the errors of ExportAndWait; MaxWait counts from
// the call and again from each change of the job's status or updated_time. A
// process that restarts resumes waiting for the job it started.
func (c *Client) WaitJob(ctx context.Context, id int64, status string, w ExportWait) (string, error) {
	w = w.withDefaults()
	op := fmt.Sprintf("export job %d", id)
	deadline := c.clock.Now().Add(w.MaxWait)
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(w.PollInterval),
		backoff.WithMaxInterval(w.MaxPollInterval),
		backoff.WithMaxElapsedTime(0),
		backoff.WithClockProvider(c.clock),
	)
	var updated time.Time
	for {
		left := deadline.Sub(c.clock.Now())
		if left <= 0 {
			return "", fmt.Errorf("%s: %w: still %q after %v without progress", op, ErrJobStalled, status, w.MaxWait)
		}
		// The last read happens at the deadline.
		if err := sleep(ctx, c.clock, min(bo.NextBackOff(), left)); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		job, err := c.GetJob(ctx, id)
		if err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		if w.OnPoll != nil {
			w.OnPoll(job)
		}
		if job.Status != status || !job.UpdatedTime.Equal(updated) {
			deadline = c.clock.Now().Add(w.MaxWait) // progress: the bound starts again
		}
		status, updated = job.Status, job.UpdatedTime
		switch status {
		case JobStarted, JobZipInProgress:
			continue
		case JobCompleted:
			if job.JobData == nil || job.JobData.Path == "" {
				return "", fmt.Errorf("%s: %w: completed without a report path", op, ErrJobFailed)
			}
			return job.JobData.Path, nil
		default:
			return "", fmt.Errorf("%s: %w: status %q", op, ErrJobFailed, status)
		}
	}
}
