package backfill

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// prefetch is the next span's export job and report, made while the current
// span is published, so that the span after the first starts publishing at
// once instead of waiting for its job and its download. It is kept in memory
// only: a run killed before adopting it starts that job again (one export
// request more), and its report file is removed when the next run starts
// (removeStale). A prefetch that fails for whatever reason is dropped, and the
// span goes the usual way (job, download, jobs replaced up to MaxJobs).
type prefetch struct {
	span   int
	cancel context.CancelFunc
	done   chan struct{}
	// Set by the goroutine before done is closed.
	jobID     int64
	url       string
	completed time.Time
	file      string
	size      int64
	pre       *prescan
	took      time.Duration
	err       error
}

// startPrefetch starts fetching the next span's report, unless the current
// span is the last or its prefetch is under way.
func (r *run) startPrefetch(ctx context.Context) {
	next := r.cp.Span + 1
	if next >= len(r.spans) || (r.pf != nil && r.pf.span == next) {
		return
	}
	r.dropPrefetch()
	pctx, cancel := context.WithCancel(ctx)
	pf := &prefetch{span: next, cancel: cancel, done: make(chan struct{})}
	r.pf = pf
	req := r.req.exportRequest(r.spans[next], next == len(r.spans)-1)
	want := r.exportedIn(next)
	go func() {
		defer close(pf.done)
		t := time.Now()
		defer func() { pf.took = time.Since(t) }()
		j, err := r.b.API.Export(pctx, req)
		if err != nil {
			pf.err = fmt.Errorf("export: %w", err)
			return
		}
		pf.jobID = j.ID
		w := r.b.Wait
		w.OnPoll = nil // the progress shows the span being published
		if pf.url, err = r.b.API.WaitJob(pctx, j.ID, j.Status, w); err != nil {
			pf.err = err
			return
		}
		pf.completed = time.Now().UTC()
		pf.file = reportFile(r.b.Dir, r.b.Account, j.ID)
		pf.size, pf.pre, pf.err = download(pctx, r.b.HTTP, pf.url, pf.file, want, r.b.DownloadRetry, nil)
	}()
}

// adoptPrefetch makes the prefetched job the current span's (waiting for it
// to end) when it was made for this span and succeeded; false otherwise, the
// prefetch dropped.
func (r *run) adoptPrefetch() (*prescan, bool) {
	pf := r.pf
	if pf == nil || pf.span != r.cp.Span || r.cp.JobID != 0 {
		return nil, false
	}
	<-pf.done
	r.pf = nil
	r.stages.prefetch += pf.took
	if pf.jobID != 0 {
		r.cp.Jobs++
	}
	if pf.err != nil {
		r.b.Log.Warn().Err(pf.err).Int64("job_id", pf.jobID).Msg("backfill: the next span's export made ahead failed; its span makes its own")
		r.removeReport(pf)
		return nil, false
	}
	r.outcome(OutcomeCompleted)
	r.cp.JobID, r.cp.Path, r.cp.Completed, r.cp.Size, r.cp.Pass, r.cp.Record = pf.jobID, pf.url, pf.completed, pf.size, 0, 0
	r.cp.Downloads++
	return pf.pre, true
}

// dropPrefetch cancels the prefetch under way, if any, and removes what it
// downloaded.
func (r *run) dropPrefetch() {
	pf := r.pf
	if pf == nil {
		return
	}
	r.pf = nil
	pf.cancel()
	<-pf.done
	r.removeReport(pf)
}

func (r *run) removeReport(pf *prefetch) {
	if pf.file != "" {
		_ = os.Remove(pf.file)
		_ = os.Remove(pf.file + ".part")
	}
}

// removeStale removes the reports of this account's export jobs other than
// the checkpoint's: left by a prefetch of a run that was killed.
func (r *run) removeStale() {
	keep := reportFile(r.b.Dir, r.b.Account, r.cp.JobID)
	files, _ := filepath.Glob(fmt.Sprintf("%s/callbus-backfill-%s-job*.report*", r.b.Dir, r.b.Account)) // reportFile's names
	for _, f := range files {
		if f != keep {
			_ = os.Remove(f)
		}
	}
}
