package backfill

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/sim"
)

// TestBackfillGivesUp: a resumed backfill whose jobs all fail (one stalls, two
// end "failed") gives up after MaxJobs with ErrIncomplete and the reason, drops
// its progress, records why, and puts the high water back to the one before the
// backfill, although the first run had moved it; the outcomes are counted.
func TestBackfillGivesUp(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 7, History: 50, HistorySpan: 5 * 24 * time.Hour,
		Jobs: []sim.JobOutcome{sim.JobFails, sim.JobStalls, sim.JobFails}})
	e.b.RetryWait, e.b.Wait.MaxWait = 10*time.Millisecond, time.Second
	now := e.w.Sim.Start()
	req := Request{Since: now.AddDate(0, -1, 0), Until: now, Resources: []string{"calls"}}
	// As if a first run had read history up to a day ago, then been killed.
	h, err := e.b.Poller.History(t.Context(), func() cursor.Lease { return e.lease })
	if err != nil {
		t.Fatal(err)
	}
	cur := newCheckpoint(req, now, "").cursors()
	cur[poll.CursorHighWater] = now.AddDate(0, 0, -1).Format(time.RFC3339Nano)
	if err := h.Commit(cur); err != nil {
		t.Fatal(err)
	}
	err = e.run(t, req)
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "3 export jobs failed") || !strings.Contains(err.Error(), `status "failed"`) {
		t.Fatalf("got %v, want ErrIncomplete with the reason", err)
	}
	c, err := e.store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	inc, ok := ReadIncomplete(c)
	if !ok || inc.Jobs != 3 || c[poll.CursorBackfill] != "" || c[poll.CursorHighWater] != "" || Fresh(c) {
		t.Errorf("after giving up: incomplete %+v (%v), cursors %v", inc, ok, c)
	}
	st := e.b.Progress.State()
	if st.Phase != PhaseIncomplete || st.Jobs != [len(Outcomes)]int64{0, 2, 1, 0} {
		t.Errorf("progress %s, jobs %v", st.Phase, st.Jobs)
	}
	// A later backfill that completes clears the record.
	if err := e.run(t, Request{Since: req.Since, Until: req.Until.Add(time.Second), Resources: req.Resources}); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.store.Cursors(t.Context()); c[poll.CursorBackfillIncomplete] != "" {
		t.Error("the incomplete record outlived a completed backfill")
	}
}

// wrongReport serves the first report download as a JSON object without the
// requested resources (what a wrongly zipped or truncated export looks like).
type wrongReport struct{ served atomic.Bool }

func (w *wrongReport) RoundTrip(r *http.Request) (*http.Response, error) {
	if w.served.CompareAndSwap(false, true) {
		body := `{"manifest":{"files":["calls.json"]},"calls_count":12}`
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Header: http.Header{}, Request: r}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestBackfillReplacesUnreadableReport: a report holding none of the requested
// resources fails its job (counted unreadable) and a new job's report is read:
// the history is announced whole, not taken for empty.
func TestBackfillReplacesUnreadableReport(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 8, History: 120, HistorySpan: 5 * 24 * time.Hour})
	e.b.RetryWait, e.b.HTTP = 10*time.Millisecond, &http.Client{Transport: &wrongReport{}}
	now := e.w.Sim.Start()
	if err := e.run(t, Request{Since: now.AddDate(0, -1, 0), Until: now, Resources: []string{"calls"}}); err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, ev := range e.outbox(t) {
		if ev.Type == events.CallCreated {
			created++
		}
	}
	if st := e.b.Progress.State(); created != 120 || st.Jobs != [len(Outcomes)]int64{2, 0, 0, 1} {
		t.Errorf("%d calls created, jobs by outcome %v; want 120 and one unreadable report", created, st.Jobs)
	}
}

// refusedReports answers every report download 404, as a store that never
// serves the job's report (a wrong host behind a proxy, a bucket without the
// object) does; it counts the downloads tried.
type refusedReports struct{ tried atomic.Int64 }

func (rr *refusedReports) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.tried.Add(1)
	return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Body: io.NopCloser(strings.NewReader("")),
		Header: http.Header{}, Request: r}, nil
}

// TestBackfillGivesUpOnReportsRefused: a report refused at once after its job
// completed is not an expired URL (those are dated: reportTTL); each counts as an
// unreadable job, replaced a bounded number of times, and the backfill gives up
// (ErrIncomplete) instead of starting new export jobs for ever.
func TestBackfillGivesUpOnReportsRefused(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 9, History: 30, HistorySpan: 5 * 24 * time.Hour})
	rr := &refusedReports{}
	e.b.RetryWait, e.b.HTTP = 10*time.Millisecond, &http.Client{Transport: rr}
	now := e.w.Sim.Start()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	err := e.b.Run(ctx, Request{Since: now.AddDate(0, -1, 0), Until: now, Resources: []string{"calls"}}, func() cursor.Lease { return e.lease })
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("got %v after %d downloads, want ErrIncomplete naming the 404", err, rr.tried.Load())
	}
	if st := e.b.Progress.State(); st.Jobs != [len(Outcomes)]int64{3, 0, 0, 3} {
		t.Errorf("jobs by outcome %v, want 3 completed and 3 unreadable", st.Jobs)
	}
}
