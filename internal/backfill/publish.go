package backfill

import (
	"context"
	"fmt"
	"time"

	"github.com/callbus/callbus/events"
)

// chunk is how many records are diffed and committed together with the
// checkpoint.
const chunk = 1000

// publish reads the downloaded report in two passes (calls, users, teams; then
// metrics) from the checkpoint's position, committing each chunk of records with
// the position after it. A record the report lists more than once is read from
// its newest copy only (findDupes).
func (r *run) publish(ctx context.Context, path string) error {
	rep, err := openReport(path, r.exported())
	if err != nil {
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, err)
	}
	pr := &passReader{api: r.b.API, op: fmt.Sprintf("export job %d report", r.cp.JobID), want: rep.want}
	if err := r.findDupes(rep, pr); err != nil {
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, err)
	}
	for ; r.cp.Pass < 2; r.cp.Pass, r.cp.Record = r.cp.Pass+1, 0 {
		if err := r.pass(ctx, rep, pr); err != nil {
			return err
		}
	}
	return nil
}

// findDupes sets the copies pr passes over.
func (r *run) findDupes(rep *report, pr *passReader) error {
	rc, err := rep.open()
	if err != nil {
		return err
	}
	defer rc.Close()
	older, n, err := findDupes(rc, rep.want)
	if err != nil {
		return err
	}
	if n > 0 {
		r.b.Log.Warn().Int64("job_id", r.cp.JobID).Int("copies", n).
			Msg("backfill: the report lists records more than once; each is announced once, from its newest copy (latest updated_time, then the last listed)")
	}
	pr.older = older
	return nil
}

// pass reads one pass of the report.
func (r *run) pass(ctx context.Context, rep *report, pr *passReader) error {
	rc, err := rep.open()
	if err != nil {
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, err)
	}
	defer rc.Close()
	size := rep.size
	r.update(func(s *State) { s.Phase, s.Bytes, s.Total = PhasePublishing, 0, 2*size })
	done := int64(r.cp.Pass) * size
	in := &counting{r: rc, progress: func(n, _ int64) {
		if n%(1<<20) < 32<<10 { // about every MB
			r.update(func(s *State) { s.Bytes = done + n })
		}
	}}
	ps := &passSink{r: r, ctx: ctx}
	pr.from = r.cp.Record
	if err := pr.read(in, r.cp.Pass, ps); err != nil {
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, err)
	}
	return ps.flush()
}

// passSink collects a chunk of records and commits it with the position after
// it. Records before the checkpoint's position were committed by an earlier run.
type passSink struct {
	r       *run
	ctx     context.Context
	calls   []events.Call
	metrics []events.CallMetric
	users   []events.User
	teams   []events.Team
	next    int64 // position after the last record held
}

func (s *passSink) call(pos int64, c events.Call) error {
	return s.hold(pos, func() { s.calls = append(s.calls, c) })
}

func (s *passSink) metric(pos int64, m events.CallMetric) error {
	return s.hold(pos, func() { s.metrics = append(s.metrics, m) })
}

func (s *passSink) user(pos int64, u events.User) error {
	return s.hold(pos, func() { s.users = append(s.users, u) })
}

func (s *passSink) team(pos int64, t events.Team) error {
	return s.hold(pos, func() { s.teams = append(s.teams, t) })
}

// skip moves the position past a record passed over (rejected, or an older
// copy): a run resumed after the chunk does not read it again.
func (s *passSink) skip(pos int64) { s.next = pos + 1 }

func (s *passSink) hold(pos int64, add func()) error {
	add()
	s.next = pos + 1
	if len(s.calls)+len(s.metrics) >= chunk {
		return s.flush()
	}
	return nil
}

// flush diffs and commits what is held, with the checkpoint after it. Users and
// teams (a few hundred at most) wait for the end of the pass.
func (s *passSink) flush() error {
	r := s.r
	held := int64(len(s.calls) + len(s.metrics))
	if err := r.h.Calls(s.calls); err != nil {
		return err
	}
	if err := r.h.Metrics(s.metrics); err != nil {
		return err
	}
	if s.next == 0 || (held == 0 && len(s.users)+len(s.teams) == 0) {
		return nil
	}
	if err := r.waitOutbox(s.ctx); err != nil {
		return err
	}
	if len(s.users) > 0 || len(s.teams) > 0 {
		if err := r.people(s.ctx, s.users, s.teams); err != nil {
			return err
		}
		held += int64(len(s.users) + len(s.teams))
		s.users, s.teams = nil, nil
	}
	s.calls, s.metrics = s.calls[:0], s.metrics[:0]
	r.cp.Record = s.next
	r.cp.Records += held
	r.cp.Events = r.eventsBase + int64(r.h.Events())
	if err := r.commit(); err != nil {
		return err
	}
	r.update(func(st *State) { st.Records, st.Events = r.cp.Records, r.cp.Events })
	return nil
}

// people diffs users and teams, the end of a pass (only the last one).
func (r *run) people(ctx context.Context, users []events.User, teams []events.Team) error {
	if err := r.h.Users(ctx, users); err != nil && len(users) > 0 {
		return err
	}
	if len(teams) > 0 {
		return r.h.Teams(ctx, teams)
	}
	return nil
}

// waitOutbox pauses while the outbox holds more than MaxOutbox events: the relay
// publishes them meanwhile, so Redis never holds the whole history at once.
func (r *run) waitOutbox(ctx context.Context) error {
	if err := WaitOutbox(ctx, r.b.Store, r.b.MaxOutbox); err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	return nil
}

// WaitOutbox returns once store's outbox holds at most max events (0: once the
// relay has published everything), checking every 100 ms, or with ctx's error.
func WaitOutbox(ctx context.Context, store interface {
	OutboxLen(context.Context) (int64, error)
}, max int64) error {
	for {
		n, err := store.OutboxLen(ctx)
		if err != nil {
			return fmt.Errorf("outbox length: %w", err)
		}
		if n <= max {
			return nil
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
