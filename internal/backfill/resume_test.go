package backfill

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/sim"
	"github.com/rs/zerolog"
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
	e.commitProgress(t, cp.cursors())
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

// TestBackfillResumesEarlierPlan: progress as a release before the ramp
// committed it (no plan: two-year spans), at span 2 of 2 of a three-year
// request, resumes with the two-year spans: one job, for the last two-year
// span, with the users. A later backfill of the first two years then finds
// every other call: none fell between the two.
func TestBackfillResumesEarlierPlan(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 8, History: 300, HistorySpan: 1000 * 24 * time.Hour})
	e.b.Progress = NewProgress(nil, zerolog.Nop(), time.Hour)
	now := e.w.Sim.Start()
	req := Request{Since: now.AddDate(-3, 0, 0), Until: now, Resources: []string{"calls", "call_metrics", "users"}}
	old := req.spans(planTwoYears)
	if len(old) != 2 || len(req.spans(planRamp)) != 6 {
		t.Fatalf("spans: %v two-year, %v ramp; want 2 and 6", old, req.spans(planRamp))
	}
	stored := fmt.Sprintf(`{"since":%q,"until":%q,"resources":["calls","call_metrics","users"],"span":1,"pass":0,"record":0,`+
		`"records":0,"events":0,"jobs":1,"downloads":1,"requests":4,"started":%q}`,
		req.Since.UTC().Format(time.RFC3339Nano), req.Until.UTC().Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	e.commitProgress(t, map[string]string{poll.CursorBackfill: stored})
	if err := e.run(t, req); err != nil {
		t.Fatal(err)
	}
	if s := e.b.Progress.State(); s.Span != 2 || s.Spans != 2 {
		t.Errorf("progress at span %d of %d, want 2 of 2", s.Span, s.Spans)
	}
	cur, err := e.store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var done Checkpoint
	if err := jsonUnmarshal(cur[poll.CursorBackfillDone], &done); err != nil || done.Plan != planTwoYears || done.Jobs != 2 {
		t.Fatalf("summary %+v (%v), want plan 0 and one job more", done, err)
	}
	calls, users := createdCalls(t, e), 0
	for _, ev := range e.outbox(t) {
		if ev.Type == events.UserCreated {
			users++
		}
	}
	if len(calls) == 0 || users == 0 {
		t.Fatalf("%d calls and %d users announced, want the last two-year span's and the users", len(calls), users)
	}
	for id, created := range calls {
		if created.Before(old[1].from) || created.After(old[1].to) {
			t.Errorf("call %d created %v, outside the last two-year span %v to %v", id, created, old[1].from, old[1].to)
		}
	}
	first := Request{Since: req.Since, Until: old[0].to, Resources: []string{"calls", "call_metrics"}}
	if err := e.run(t, first); err != nil {
		t.Fatal(err)
	}
	if n := len(createdCalls(t, e)); n != 300 {
		t.Errorf("%d calls announced in all, want 300", n)
	}
}

// createdCalls maps the calls announced so far to their creation time.
func createdCalls(t *testing.T, e *env) map[int64]time.Time {
	t.Helper()
	out := map[int64]time.Time{}
	for _, ev := range e.outbox(t) {
		if ev.Type != events.CallCreated {
			continue
		}
		var d events.CallData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		out[d.Call.ID] = d.Call.CreatedTime
	}
	return out
}

// TestBackfillUnknownPlan: progress split by a plan this release does not know
// (a later release's, after a downgrade) starts the request over with the
// latest plan rather than read its Span as this release's.
func TestBackfillUnknownPlan(t *testing.T) {
	e := newEnv(t, sim.Config{Seed: 9, History: 200, HistorySpan: 300 * 24 * time.Hour})
	now := e.w.Sim.Start()
	req := Request{Since: now.AddDate(-1, 0, 0), Until: now, Resources: []string{"calls"}}
	cp := newCheckpoint(req, now, "")
	cp.Plan, cp.Span, cp.Jobs = 9, 3, 4
	e.commitProgress(t, cp.cursors())
	if err := e.run(t, req); err != nil {
		t.Fatal(err)
	}
	cur, err := e.store.Cursors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var done Checkpoint
	want := len(req.spans(planLatest))
	if err := jsonUnmarshal(cur[poll.CursorBackfillDone], &done); err != nil || done.Plan != planLatest || done.Jobs != 4+want {
		t.Errorf("summary %+v (%v), want plan %d and %d jobs more", done, err, planLatest, want)
	}
	if n := len(createdCalls(t, e)); n != 200 {
		t.Errorf("%d calls announced, want 200", n)
	}
}
