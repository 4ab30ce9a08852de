package backfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/poll"
	"github.com/cenkalti/backoff/v4"
)

// Outcomes of an export job (State.Jobs, callbus_backfill_jobs_total).
const (
	OutcomeCompleted  = "completed"  // the job completed with a report
	OutcomeFailed     = "failed"     // it ended in another status, or was gone
	OutcomeStalled    = "stalled"    // no progress for ExportWait.MaxWait
	OutcomeUnreadable = "unreadable" // its report could not be downloaded, read or parsed
)

// Outcomes lists the outcomes in the order of State.Jobs.
var Outcomes = [...]string{OutcomeCompleted, OutcomeFailed, OutcomeStalled, OutcomeUnreadable}

// ErrIncomplete is matched by the error of Run when it gave up on the history
// (see giveUp): the history it read is announced, the rest is not, and paged
// reads take over.
var ErrIncomplete = errors.New("backfill incomplete")

// jobError is a failure of one export job that a new job may not have.
type jobError struct {
	outcome string
	err     error
}

func (e *jobError) Error() string { return e.outcome + ": " + e.err.Error() }
func (e *jobError) Unwrap() error { return e.err }

// Incomplete is the record of a backfill that gave up (cursor
// poll.CursorBackfillIncomplete), kept until a later backfill completes.
type Incomplete struct {
	Since     time.Time `json:"since"`
	Until     time.Time `json:"until"`
	Resources []string  `json:"resources"`
	Span      int       `json:"span"` // 1-based, of Spans
	Spans     int       `json:"spans"`
	Jobs      int       `json:"jobs"` // export jobs the span used up
	Reason    string    `json:"reason"`
	At        time.Time `json:"at"`
}

func (i Incomplete) String() string {
	return fmt.Sprintf("history %s to %s (%s), span %d of %d: %d export jobs failed, the last with %s",
		i.Since.Format(time.RFC3339), i.Until.Format(time.RFC3339), strings.Join(i.Resources, ","), i.Span, i.Spans, i.Jobs, i.Reason)
}

// ReadIncomplete returns the record of the last backfill that gave up, from the
// account's cursors; ok is false when there is none (or a backfill completed
// since).
func ReadIncomplete(cur map[string]string) (inc Incomplete, ok bool) {
	v := cur[poll.CursorBackfillIncomplete]
	if v == "" {
		return inc, false
	}
	if err := json.Unmarshal([]byte(v), &inc); err != nil {
		inc.Reason = "unreadable record: " + err.Error()
	}
	return inc, true
}

// replace counts a failed job of the span, and starts the span's next job after
// a wait, or gives up when the span used up MaxJobs.
func (r *run) replace(ctx context.Context, je *jobError) error {
	r.outcome(je.outcome)
	_ = os.Remove(reportFile(r.b.Dir, r.b.Account, r.cp.JobID))
	r.cp.Failures++
	r.cp.LastFailure = je.Error()
	if r.cp.Failures >= r.b.MaxJobs {
		return r.giveUp(je)
	}
	wait := r.retryWait()
	r.b.Log.Warn().Err(je).Int64("job_id", r.cp.JobID).Str("outcome", je.outcome).Int("jobs_failed", r.cp.Failures).
		Int("max_jobs", r.b.MaxJobs).Dur("next_job_in_ms", wait).Msg("backfill: export job failed; a new job replaces it")
	r.cp.newJob()
	if err := r.commit(true); err != nil {
		return err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryWait is the wait before the span's next job: RetryWait after the first
// failure, doubling (with jitter) after each further one.
func (r *run) retryWait() time.Duration {
	bo := backoff.NewExponentialBackOff(backoff.WithInitialInterval(r.b.RetryWait), backoff.WithMultiplier(2),
		backoff.WithMaxInterval(64*r.b.RetryWait), backoff.WithMaxElapsedTime(0))
	wait := bo.NextBackOff()
	for range r.cp.Failures - 1 {
		wait = bo.NextBackOff()
	}
	return wait
}

// giveUp ends a backfill whose span used up its jobs: it forgets the progress,
// records why (Incomplete), and puts the high water back where it was before
// the backfill, so the live poller's first paged read covers its configured
// span (calls_backfill_hours) as it would have without the export; what the
// backfill announced diffs to nothing there. It returns the error Run returns.
func (r *run) giveUp(je *jobError) error {
	inc := Incomplete{Since: r.req.Since, Until: r.req.Until, Resources: r.req.Resources, Span: r.cp.Span + 1,
		Spans: len(r.spans), Jobs: r.cp.Failures, Reason: je.Error(), At: time.Now().UTC()}
	rec, _ := json.Marshal(inc) // plain values: always marshals
	r.cp.Requests = r.requests()
	if err := r.h.Abandon(r.cp.HighWater, map[string]string{poll.CursorBackfill: "", poll.CursorBackfillIncomplete: string(rec)}); err != nil {
		return err
	}
	r.update(func(s *State) { s.Phase, s.Incomplete = PhaseIncomplete, inc.String() })
	r.b.Log.Error().Int("jobs_failed", inc.Jobs).Str("reason", inc.Reason).
		Msg("backfill: giving up on the export; history incomplete; the live poller's paged reads take over")
	return fmt.Errorf("%w: %s", ErrIncomplete, inc)
}

// outcome counts an export job's outcome.
func (r *run) outcome(o string) {
	r.update(func(s *State) {
		for i, name := range Outcomes {
			if name == o {
				s.Jobs[i]++
			}
		}
	})
}

// exported names the resources the current span's job exports.
func (r *run) exported() []string { return r.exportedIn(r.cp.Span) }

// exportedIn names the resources the job of span i exports.
func (r *run) exportedIn(i int) []string {
	req := r.req.exportRequest(r.spans[i], i == len(r.spans)-1)
	out := make([]string, len(req.Resources))
	for i, res := range req.Resources {
		out[i] = res.Name
	}
	return out
}
