package backfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/rs/zerolog"
)

// ErrOtherBackfill is returned by Run when the store holds the progress of a
// different backfill: it must be finished first.
var ErrOtherBackfill = errors.New("backfill: another backfill is under way for this account")

// Store is what a backfill reads of the account's state (cursor.Store); it writes
// only through poll.History.
type Store interface {
	Cursors(ctx context.Context) (map[string]string, error)
	OutboxLen(ctx context.Context) (int64, error)
}

// Backfill runs backfills for one account. Its fields are set by the caller; the
// zero values of the optional ones take the defaults shown.
type Backfill struct {
	API     *callcenter.Client
	Store   Store
	Poller  *poll.Poller // a poller of its own: it must not Run
	Account string
	// HTTP downloads reports [a client without timeout: reports are large].
	HTTP *http.Client
	// Dir keeps the report while it is read [os.TempDir()].
	Dir string
	// Wait bounds waiting for an export job (see callcenter.ExportWait).
	Wait callcenter.ExportWait
	// DownloadRetry bounds the retries of one report download [15m].
	DownloadRetry time.Duration
	// MaxOutbox pauses publishing while the outbox holds more events than this,
	// so Redis holds a bounded backlog while the relay catches up [100000].
	MaxOutbox int64
	// MaxJobs is how many export jobs a span may use up (failed, stalled, or
	// their report unreadable) before the backfill gives up on it [3].
	MaxJobs int
	// RetryWait is the wait before the second job of a span; it doubles, with
	// jitter, for each job after [1m].
	RetryWait time.Duration
	Progress  *Progress
	Log       zerolog.Logger
}

func (b *Backfill) defaults() {
	if b.HTTP == nil {
		b.HTTP = &http.Client{}
	}
	if b.Dir == "" {
		b.Dir = os.TempDir()
	}
	if b.DownloadRetry <= 0 {
		b.DownloadRetry = 15 * time.Minute
	}
	if b.MaxOutbox <= 0 {
		b.MaxOutbox = 100_000
	}
	if b.MaxJobs <= 0 {
		b.MaxJobs = 3
	}
	if b.RetryWait <= 0 {
		b.RetryWait = time.Minute
	}
	if b.Progress == nil {
		b.Progress = NewProgress(nil, b.Log, 5*time.Second)
	}
}

// Run backfills req while lease is held, resuming the stored progress of the
// same request (split into spans as it was when it started), and returns when every span is committed. An export job that
// fails, stalls, or whose report cannot be downloaded or read is replaced by a
// new one, up to MaxJobs per span with a growing wait between them; then Run
// gives up (giveUp) and fails with an error matching ErrIncomplete, having put
// the state back to where paged reads take over. It fails with ErrOtherBackfill
// when a different request is under way, poll.ErrLostLease when the lease passed
// to another process, and with the error of a step that could not be completed
// (an export refused, the API or Redis unreachable); progress committed so far
// stays, and running the same request again resumes it.
func (b *Backfill) Run(ctx context.Context, req Request, lease func() cursor.Lease) error {
	b.defaults()
	if err := req.Check(); err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	cur, err := b.Store.Cursors(ctx)
	if err != nil {
		return fmt.Errorf("backfill: read progress: %w", err)
	}
	cp, ok, err := readCheckpoint(cur)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		cp = newCheckpoint(req, time.Now().UTC(), cur[poll.CursorHighWater])
	case !cp.same(req):
		return fmt.Errorf("%w: %s to %s (%v); run it again to finish it first", ErrOtherBackfill,
			cp.Since.Format(time.RFC3339), cp.Until.Format(time.RFC3339), cp.Resources)
	case !knownPlan(cp.Plan):
		b.Log.Warn().Int("plan", cp.Plan).Int("span", cp.Span+1).
			Msg("backfill: the progress is split by a plan this release does not know; starting the request over")
		cp.replan()
	default:
		b.Log.Info().Int("plan", cp.Plan).Int("span", cp.Span+1).Int64("job_id", cp.JobID).Int("pass", cp.Pass).Int64("record", cp.Record).
			Msg("backfill: resuming")
	}
	h, err := b.Poller.History(ctx, lease)
	if err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	r := &run{b: b, h: h, req: req, cp: cp, spans: req.spans(cp.Plan), start: int64(b.API.Usage().Requests), base: cp.Requests, eventsBase: cp.Events,
		started: time.Now()}
	r.removeStale()
	defer r.dropPrefetch()
	return r.all(ctx)
}

// run is one execution of a backfill.
type run struct {
	b     *Backfill
	h     *poll.History
	req   Request
	cp    Checkpoint
	spans []span // of the checkpoint's plan
	start int64  // API requests of this process before the run
	base  int64  // API requests of earlier runs of this backfill
	// eventsBase is the events committed by earlier runs.
	eventsBase int64
	stages     stages
	started    time.Time
	pf         *prefetch // the next span's job and report, made ahead
}

// requests is how many API requests the backfill used, over all its runs.
func (r *run) requests() int64 { return r.base + int64(r.b.API.Usage().Requests) - r.start }

func (r *run) all(ctx context.Context) error {
	r.update(func(s *State) { s.Records, s.Events, s.Spans = r.cp.Records, r.cp.Events, len(r.spans) })
	for r.cp.Span < len(r.spans) {
		if err := r.span(ctx); err != nil {
			return err
		}
		_ = os.Remove(reportFile(r.b.Dir, r.b.Account, r.cp.JobID))
		r.cp.Span++
		r.cp.newJob()
		r.cp.Failures, r.cp.LastFailure = 0, ""
		if err := r.commit(true); err != nil {
			return err
		}
	}
	r.cp.Requests = r.requests()
	done, _ := json.Marshal(r.cp)
	if err := r.h.Done(r.req.Since, map[string]string{poll.CursorBackfill: "", poll.CursorBackfillDone: string(done),
		poll.CursorBackfillIncomplete: ""}); err != nil {
		return err
	}
	r.update(func(s *State) { s.Phase = PhaseDone })
	r.stages.log(r.b.Log.Info().Int64("records", r.cp.Records).Int64("events", r.cp.Events).Int("jobs", r.cp.Jobs).
		Int64("requests", r.cp.Requests).Float64("run_s", time.Since(r.started).Round(10*time.Millisecond).Seconds())).
		Msg("backfill: done")
	return nil
}

// span backfills the current span: its job, its report, its records. A report
// URL that expired starts a new job; a job that failed (jobError) is replaced
// while the span has jobs left (replace).
func (r *run) span(ctx context.Context) error {
	for {
		err := r.attempt(ctx)
		var je *jobError
		if !errors.As(err, &je) {
			return err
		}
		if err := r.replace(ctx, je); err != nil {
			return err
		}
	}
}

// attempt reads the span through its current job (the one made ahead while
// the span before was published, or a new one when none is under way), and
// starts making the next span's meanwhile (startPrefetch).
func (r *run) attempt(ctx context.Context) error {
	for {
		pre, adopted := r.adoptPrefetch()
		if adopted {
			r.update(func(st *State) { st.Span, st.JobID = r.cp.Span+1, r.cp.JobID })
			if err := r.commit(true); err != nil {
				return err
			}
		} else if err := r.job(ctx); err != nil {
			return err
		}
		path := reportFile(r.b.Dir, r.b.Account, r.cp.JobID)
		if !haveReport(path, r.cp.Size) {
			var err error
			pre, err = r.download(ctx, path)
			if je := (*jobError)(nil); !errors.As(err, &je) && errors.Is(err, errExpired) {
				r.b.Log.Warn().Int64("job_id", r.cp.JobID).Msg("backfill: the report URL expired; starting a new export job")
				r.cp.newJob()
				if err := r.commit(true); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
		}
		r.startPrefetch(ctx)
		err := r.publish(ctx, path, pre)
		if re := (*reportError)(nil); errors.As(err, &re) {
			return &jobError{outcome: OutcomeUnreadable, err: err}
		}
		return err
	}
}

// job makes sure the span's export job exists and completed, committing its id
// as soon as it is known (a restart waits for the same job) and its report URL.
func (r *run) job(ctx context.Context) error {
	if r.cp.Path != "" {
		return nil
	}
	s := r.spans[r.cp.Span]
	status := callcenter.JobStarted
	if r.cp.JobID == 0 {
		j, err := r.b.API.Export(ctx, r.req.exportRequest(s, r.cp.Span == len(r.spans)-1))
		if err != nil {
			return fmt.Errorf("backfill: export %s to %s: %w", s.from.Format(time.RFC3339), s.to.Format(time.RFC3339), err)
		}
		r.cp.JobID, r.cp.Jobs, status = j.ID, r.cp.Jobs+1, j.Status
		if err := r.commit(true); err != nil {
			return err
		}
	}
	r.update(func(st *State) {
		st.Phase, st.Span, st.JobID, st.Bytes, st.Total = PhaseJobStarted, r.cp.Span+1, r.cp.JobID, 0, -1
	})
	t := time.Now()
	defer func() { r.stages.job += time.Since(t) }()
	w := r.b.Wait
	w.OnPoll = func(j callcenter.Job) {
		if j.Status == callcenter.JobZipInProgress {
			r.update(func(st *State) { st.Phase = PhaseZipping })
		} else {
			r.update(func(*State) {})
		}
	}
	path, err := r.b.API.WaitJob(ctx, r.cp.JobID, status, w)
	switch {
	case errors.Is(err, callcenter.ErrJobStalled):
		return &jobError{outcome: OutcomeStalled, err: err}
	case errors.Is(err, callcenter.ErrJobFailed), callcenter.IsNotFound(err):
		return &jobError{outcome: OutcomeFailed, err: err}
	case err != nil:
		return fmt.Errorf("backfill: %w", err)
	}
	r.outcome(OutcomeCompleted)
	r.cp.Path, r.cp.Completed = path, time.Now().UTC()
	return r.commit(true)
}

// download fetches the report (and what the download read of it: see
// download), unless its URL is known to have expired
// (errExpired: it completed reportTTL ago, a new job is due). A report refused
// (403, 404, 410) before that is no expiry: it counts as an unreadable job,
// replaced a bounded number of times, or a store that never serves reports
// would have the backfill start new export jobs for ever.
func (r *run) download(ctx context.Context, path string) (*prescan, error) {
	if time.Since(r.cp.Completed) > reportTTL-reportMargin {
		return nil, errExpired
	}
	r.cp.Downloads++
	r.update(func(s *State) { s.Phase, s.Bytes, s.Total = PhaseDownloading, 0, -1 })
	t := time.Now()
	size, pre, err := download(ctx, r.b.HTTP, r.cp.Path, path, r.exported(), r.b.DownloadRetry, func(done, total int64) {
		r.update(func(s *State) { s.Bytes, s.Total = done, total })
	})
	r.stages.download += time.Since(t)
	switch {
	case ctx.Err() != nil:
		return nil, err
	case err != nil: // retried for DownloadRetry already, unless refused
		return nil, &jobError{outcome: OutcomeUnreadable, err: fmt.Errorf("job %d: %w", r.cp.JobID, err)}
	}
	r.cp.Size, r.cp.Pass, r.cp.Record = size, 0, 0
	return pre, r.commit(true)
}

// commit commits the checkpoint (with whatever is queued).
func (r *run) commit(wait bool) error {
	t := time.Now()
	defer func() { r.stages.commit += time.Since(t) }()
	r.cp.Requests = r.requests()
	if !wait {
		return r.h.Checkpoint(r.cp.cursors())
	}
	return r.h.Commit(r.cp.cursors())
}

func (r *run) update(fn func(*State)) {
	req := r.requests()
	r.b.Progress.Update(func(s *State) { fn(s); s.Requests = req })
}
