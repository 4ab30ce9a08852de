package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/backfill"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/rs/zerolog"
)

// BackfillOptions make Run backfill (poller backfill) instead of polling: it
// takes the lease (refusing when another process holds it), backfills Request,
// waits until the relay published every event, and returns.
type BackfillOptions struct {
	Request backfill.Request
	// Progress shows progress (nil: JSON log lines every 5 s).
	Progress *backfill.Progress
	// Dir keeps reports while they are read (default: the temporary directory).
	Dir string
}

// ExportJobs tunes how a backfill follows its export jobs; zero fields take
// the defaults of backfill.Backfill and callcenter.ExportWait (a job stalls
// after 30 minutes without progress; 3 jobs per span, the second after 1
// minute).
type ExportJobs struct {
	Wait      callcenter.ExportWait
	MaxJobs   int
	RetryWait time.Duration
}

// WithExportJobs tunes the backfill's export jobs (tests wait seconds, not
// minutes).
func WithExportJobs(j ExportJobs) Option { return func(o *options) { o.exportJobs = j } }

// leaderWork is what the leader runs while it holds the lease: polling, after
// the first backfill of a fresh state when the settings ask for one; or, for
// poller backfill, the backfill alone.
type leaderWork struct {
	s      config.Settings
	o      options
	store  *cursor.Store
	poller *poll.Poller
	hist   *backfill.Backfill
	log    zerolog.Logger
	finish context.CancelFunc // ends Run (poller backfill)
	result error              // of poller backfill
	// newHistory makes the backfill's own poller, for a backfill's time only
	// (backfillRun): a fleet replica's accounts are nearly all polling, and a
	// poller (its encoder, schedule, buffers) kept per account for a backfill
	// that ran once, or never, was 4 KB of each account's memory.
	newHistory func() (*poll.Poller, error)
	mu         sync.Mutex
	history    *poll.Poller // the backfill's poller while one runs
	rolledBack int64        // the rollbacks the backfills' pollers found before they ended
}

// newLeaderWork builds the leader's work; the backfill gets a poller of its own
// (its events carry the history attribute) that checks the stream for a Redis
// rollback too (announced), since a backfill may commit first in a term.
func newLeaderWork(s config.Settings, o options, store *cursor.Store, api *callcenter.Client, transport *http.Transport, poller *poll.Poller,
	wake func(), announced poll.Announced, log zerolog.Logger, m *telemetry.Metrics) (*leaderWork, error) {
	blog := log.With().Str("component", "backfill").Logger()
	newHistory := func() (*poll.Poller, error) {
		return poll.New(pollConfig(s), api, store, blog, poll.WithWake(wake), poll.WithAnnounced(announced))
	}
	if _, err := newHistory(); err != nil { // the settings' errors now, not at the first backfill
		return nil, err
	}
	prog := backfill.NewProgress(nil, blog, 5*time.Second)
	b := &backfill.Backfill{API: api, Store: store, Account: s.Account, HTTP: &http.Client{Transport: transport}, Log: blog, Progress: prog,
		Wait: o.exportJobs.Wait, MaxJobs: o.exportJobs.MaxJobs, RetryWait: o.exportJobs.RetryWait}
	if o.backfill != nil {
		b.Dir = o.backfill.Dir
		if o.backfill.Progress != nil {
			b.Progress = o.backfill.Progress
		}
	}
	if err := m.ObserveBackfill(func(ctx context.Context) telemetry.BackfillState {
		st := b.Progress.State()
		bs := telemetry.BackfillState{Records: st.Records, Events: st.Events, Requests: st.Requests, Fraction: st.Fraction(),
			Jobs: map[string]int64{}, Incomplete: -1}
		for i, o := range backfill.Outcomes {
			bs.Jobs[o] = st.Jobs[i]
		}
		// Read from Redis, so every replica shows it, after restarts too.
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if cur, err := store.Cursors(ctx); err == nil {
			_, inc := backfill.ReadIncomplete(cur)
			bs.Incomplete = map[bool]int64{false: 0, true: 1}[inc]
		}
		return bs
	}); err != nil {
		return nil, err
	}
	return &leaderWork{s: s, o: o, store: store, poller: poller, hist: b, log: blog, newHistory: newHistory}, nil
}

// backfillRun runs the backfill of req on a poller of its own, made for it and
// dropped after it.
func (w *leaderWork) backfillRun(ctx context.Context, req backfill.Request, lease func() cursor.Lease) error {
	hp, err := w.newHistory()
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.history, w.hist.Poller = hp, hp
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.rolledBack += hp.Rollbacks()
		w.history, w.hist.Poller = nil, nil
		w.mu.Unlock()
	}()
	return w.hist.Run(ctx, req, lease)
}

// rollbacks counts the Redis rollbacks the backfills' pollers found.
func (w *leaderWork) rollbacks() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.rolledBack
	if w.history != nil {
		n += w.history.Rollbacks()
	}
	return n
}

// claim takes the lease for holder before a backfill, or says who holds it.
func (w *leaderWork) claim(ctx context.Context, holder string) error {
	_, err := w.store.Acquire(ctx, holder, w.s.LeaseTTL)
	var nl *cursor.NotLeaderError
	if errors.As(err, &nl) {
		return fmt.Errorf("account %s is led by %s (its lease ends in %v unless renewed): only the leader backfills; "+
			"stop that process first, or let the leader backfill a fresh state (export_backfill_above_hours)", w.s.Account, nl.Holder, nl.TTL)
	}
	return err
}

// run is the leader's work.
func (w *leaderWork) run(ctx context.Context, lease func() cursor.Lease) error {
	if w.o.backfill != nil {
		// What an incomplete backfill announced is published before it fails.
		err := w.backfillRun(ctx, w.o.backfill.Request, lease)
		if err == nil || errors.Is(err, backfill.ErrIncomplete) {
			t := time.Now()
			derr := w.drained(ctx)
			if err == nil {
				err = derr
			}
			// The relay's tail: what it had left to publish when the last commit
			// landed (docs/performance.md, where the time goes in a backfill).
			w.log.Info().Err(derr).Float64("relay_tail_s", time.Since(t).Round(10*time.Millisecond).Seconds()).
				Msg("backfill: outbox published")
		}
		w.result = err
		w.finish()
		return err
	}
	err := w.first(ctx, lease)
	switch {
	case err == nil:
	case errors.Is(err, backfill.ErrIncomplete):
		// The backfill gave up (export jobs failed) and put the high water
		// back: history never blocks the live path.
		w.log.Error().Err(err).Msg("backfill through the export incomplete; the paged reads of calls_backfill_hours follow")
	case callcenter.IsForbidden(err) || callcenter.IsValidation(err):
		// An export this key may not make (or the API refuses) will not work
		// later either: the paged reads do the job.
		w.log.Warn().Err(err).Msg("backfill through the export refused; the paged reads of calls_backfill_hours follow")
	default:
		// Anything else (Redis, an unreachable API, a lost lease) is retried by
		// leadership after a pause, from the committed progress: the history
		// read so far would otherwise stop the paged reads short of it (the high
		// water moved).
		return err
	}
	return w.poller.Run(ctx, lease)
}

// first runs the backfill of a fresh state (or resumes one under way) when
// calls_backfill_hours exceeds export_backfill_above_hours.
func (w *leaderWork) first(ctx context.Context, lease func() cursor.Lease) error {
	cur, err := w.store.Cursors(ctx)
	if err != nil {
		return err
	}
	req, pending, err := backfill.Pending(cur)
	if err != nil {
		return err
	}
	if !pending {
		if w.s.ExportBackfillAbove <= 0 || w.s.CallsBackfill <= w.s.ExportBackfillAbove || !backfill.Fresh(cur) {
			return nil
		}
		now := time.Now().UTC()
		req = backfill.Request{Since: now.Add(-w.s.CallsBackfill), Until: now, Resources: []string{callcenter.ExportCalls}}
		if w.s.Polls(poll.ResMetrics) {
			req.Resources = append(req.Resources, callcenter.ExportCallMetrics)
		}
	}
	w.log.Info().Time("since", req.Since).Time("until", req.Until).Strs("resources", req.Resources).Msg("backfill through the export")
	return w.backfillRun(ctx, req, lease)
}

// drained waits until the relay published every committed event.
func (w *leaderWork) drained(ctx context.Context) error {
	return backfill.WaitOutbox(ctx, w.store, 0)
}
