package backfill

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
)

// cutting fails the first report downloads halfway through.
type cutting struct {
	fails atomic.Int32
}

func (c *cutting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || c.fails.Add(-1) < 0 {
		return resp, err
	}
	resp.Body = &cutBody{r: resp.Body, left: 2000}
	return resp, nil
}

type cutBody struct {
	r    io.ReadCloser
	left int
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errors.New("connection reset (test)")
	}
	n, err := b.r.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}

func (b *cutBody) Close() error { return b.r.Close() }

// TestBackfillRetriesAndRenews: downloads cut short are retried; a report URL
// that no longer serves starts a new job (after RetryWait: one refused before
// its expiry counts as unreadable); the history is announced once all the same.
func TestBackfillRetriesAndRenews(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 6, History: 300, HistorySpan: 10 * 24 * time.Hour})
	tr := &cutting{}
	tr.fails.Store(2)
	e.b.HTTP = &http.Client{Transport: tr}
	e.b.DownloadRetry, e.b.RetryWait = time.Minute, 10*time.Millisecond
	now := e.w.Sim.Start()
	req := Request{Since: now.AddDate(0, -1, 0), Until: now, Resources: []string{"calls", "call_metrics"}}
	// As if a run had been killed after its job completed, and the store had lost the report since: its URL 404s.
	cp := newCheckpoint(req, now, "")
	cp.JobID, cp.Jobs, cp.Path, cp.Completed = 99, 1, e.w.URL+"/reports/99-gone.json", time.Now()
	h, err := e.b.Poller.History(t.Context(), func() cursor.Lease { return e.lease })
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(cp.cursors()); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, req); err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, ev := range e.outbox(t) {
		if ev.Type == events.CallCreated {
			created++
		}
	}
	cur, _ := e.store.Cursors(t.Context())
	var done Checkpoint
	if err := jsonUnmarshal(cur["backfill.done"], &done); err != nil {
		t.Fatal(err)
	}
	if created != 300 || done.Jobs != 2 || done.Downloads != 2 || tr.fails.Load() >= 0 {
		t.Errorf("%d calls created, %d jobs, %d downloads begun (%d cuts left)", created, done.Jobs, done.Downloads, tr.fails.Load())
	}
}
