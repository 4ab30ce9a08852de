package backfill

import (
	"context"
	"fmt"
	"time"

	"github.com/callbus/callbus/events"
)

// chunk is how many records (calls and metrics) are decoded and diffed
// together; checkpointEvery how many are committed with a checkpoint: each
// checkpoint waits for its commit (poll.History.Commit), so the fewer the less
// the diff waits, and a run resumed after a kill reads at most that many records
// again (they diff to nothing).
const (
	chunk           = 1000
	checkpointEvery = 2000
)

// publish reads the downloaded report in two passes (calls, users, teams; then
// metrics) from the checkpoint's position, committing the records with the
// position after them every checkpointEvery records. When the report lists
// every resource of the first pass before the metrics (the API's order), one
// read serves both passes. A record the report lists more than once is read from
// its newest copy only (findDupes; pre holds what the download's own read of
// the report found, nil when it did not read it).
func (r *run) publish(ctx context.Context, path string, pre *prescan) error {
	rep, err := openReport(path, r.exported())
	if err != nil {
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, err)
	}
	pr := &passReader{api: r.b.API, op: fmt.Sprintf("export job %d report", r.cp.JobID), want: rep.want}
	lay, err := r.findDupes(rep, pr, pre)
	if err != nil {
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, err)
	}
	for r.cp.Pass < 2 {
		last := r.cp.Pass
		if lay.inOrder() {
			last = 1
		}
		if err := r.pass(ctx, rep, pr, last); err != nil {
			return err
		}
		r.cp.Pass, r.cp.Record = last+1, 0
	}
	return nil
}

// findDupes sets the copies pr passes over and returns the report's layout,
// from pre when the download read the report (then the report is read again
// only when it lists records more than once).
func (r *run) findDupes(rep *report, pr *passReader, pre *prescan) (layout, error) {
	t := time.Now()
	defer func() { r.stages.dupes += time.Since(t) }()
	var idx reportIndex
	if pre.usable(rep) {
		idx = pre.index
	} else {
		rc, err := rep.open()
		if err != nil {
			return nil, err
		}
		idx, err = indexReport(rc, rep.want)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	older, n, err := findDupes(rep.open, rep.want, idx)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		r.b.Log.Warn().Int64("job_id", r.cp.JobID).Int("copies", n).
			Msg("backfill: the report lists records more than once; each is announced once, from its newest copy (latest updated_time, then the last listed)")
	}
	pr.older = older
	return idx.layout, nil
}

// pass reads the passes from the checkpoint's to last in one read of the
// report: a goroutine reads and decodes the records, a chunk at a time, while
// this one diffs and commits the chunk before.
func (r *run) pass(ctx context.Context, rep *report, pr *passReader, last int) error {
	rc, err := rep.open()
	if err != nil {
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, err)
	}
	defer rc.Close()
	size, passes := rep.size, int64(last-r.cp.Pass+1)
	r.update(func(s *State) { s.Phase, s.Bytes, s.Total = PhasePublishing, 0, 2*size })
	done := int64(r.cp.Pass) * size
	in := &counting{r: rc, progress: func(n, _ int64) { // the scanner reads a MB at a time
		r.update(func(s *State) { s.Bytes = done + min(n*passes, 2*size-done) })
	}}
	pr.from = r.cp.Record
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	chunks := make(chan *decodedChunk, 1) // bounded: memory for a few chunks at most
	cs := &chunker{ctx: rctx, out: chunks, cur: &decodedChunk{}}
	var readErr, diffErr error
	go func() {
		defer close(chunks)
		t := time.Now()
		readErr = pr.read(in, r.cp.Pass, last, cs)
		if readErr == nil {
			readErr = cs.send(nil)
		}
		cs.busy = time.Since(t) - cs.blocked
	}()
	ps := &passSink{r: r, ctx: ctx, next: r.cp.Record}
	for {
		t := time.Now()
		ch, ok := <-chunks
		r.stages.waitDecode += time.Since(t)
		if !ok {
			break
		}
		if diffErr == nil {
			if diffErr = ps.take(ch); diffErr != nil {
				stop() // the reader stops at its next chunk
			}
		}
	}
	r.stages.decode += cs.busy // the reader ended: channel closed
	switch {
	case diffErr != nil:
		return diffErr
	case readErr != nil:
		return fmt.Errorf("backfill: job %d: %w", r.cp.JobID, readErr)
	}
	return ps.flush(true)
}

// decodedChunk is records of a report decoded, or the start of a pass (begin).
type decodedChunk struct {
	begin   bool
	pass    int // begin: of the records that follow
	calls   []events.Call
	metrics []events.CallMetric
	users   []events.User
	teams   []events.Team
	next    int64 // position after the last record it holds or passes over (0: none)
}

// chunker is the reader's sink: it hands records over a chunk at a time.
type chunker struct {
	ctx     context.Context
	out     chan<- *decodedChunk
	cur     *decodedChunk
	blocked time.Duration // waiting for the diff to take a chunk
	busy    time.Duration // reading and decoding
}

func (c *chunker) begin(pass int) error {
	if err := c.send(&decodedChunk{}); err != nil {
		return err
	}
	return c.put(&decodedChunk{begin: true, pass: pass})
}

func (c *chunker) call(pos int64, v events.Call) error {
	c.cur.calls = append(c.cur.calls, v)
	return c.held(pos)
}

func (c *chunker) metric(pos int64, v events.CallMetric) error {
	c.cur.metrics = append(c.cur.metrics, v)
	return c.held(pos)
}

func (c *chunker) user(pos int64, v events.User) error {
	c.cur.users = append(c.cur.users, v)
	return c.held(pos)
}

func (c *chunker) team(pos int64, v events.Team) error {
	c.cur.teams = append(c.cur.teams, v)
	return c.held(pos)
}

func (c *chunker) skip(pos int64) { c.cur.next = pos + 1 }

func (c *chunker) held(pos int64) error {
	c.cur.next = pos + 1
	if len(c.cur.calls)+len(c.cur.metrics) < chunk {
		return nil
	}
	return c.send(&decodedChunk{})
}

// send hands the current chunk over, if it holds anything, and starts next
// (nil: the end).
func (c *chunker) send(next *decodedChunk) error {
	ch := c.cur
	c.cur = next
	if ch.next == 0 {
		return nil
	}
	return c.put(ch)
}

func (c *chunker) put(ch *decodedChunk) error {
	t := time.Now()
	defer func() { c.blocked += time.Since(t) }()
	select {
	case c.out <- ch:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// passSink diffs chunks of records and commits them with the position after
// them every checkpointEvery records. Records before the checkpoint's position
// were committed by an earlier run.
type passSink struct {
	r     *run
	ctx   context.Context
	users []events.User
	teams []events.Team
	held  int64 // records diffed since the last checkpoint
	next  int64 // position after the last record diffed or passed over
}

// take diffs a chunk (its calls and metrics; users and teams wait for the
// next checkpoint), or, at the start of the next pass, commits the end of this
// one first: a metric is diffed against its call's committed snapshot.
func (s *passSink) take(ch *decodedChunk) error {
	r := s.r
	if ch.begin {
		if err := s.flush(true); err != nil {
			return err
		}
		r.cp.Pass, r.cp.Record, s.next = ch.pass, 0, 0
		return nil
	}
	t := time.Now()
	if err := r.h.Calls(ch.calls); err != nil {
		return err
	}
	if err := r.h.Metrics(ch.metrics); err != nil {
		return err
	}
	r.stages.diff += time.Since(t)
	s.users, s.teams = append(s.users, ch.users...), append(s.teams, ch.teams...)
	s.held += int64(len(ch.calls) + len(ch.metrics))
	s.next = max(s.next, ch.next)
	if s.held >= checkpointEvery {
		return s.flush(false)
	}
	return nil
}

// flush commits what is diffed, with the checkpoint after it, once the outbox
// has room (waitOutbox). Unless wait, the commit runs in the background while the
// next records are diffed (History.Checkpoint); the end of a pass waits for it,
// as a metric is diffed against its call's committed snapshot.
func (s *passSink) flush(wait bool) error {
	r := s.r
	held := s.held
	if s.next <= r.cp.Record || (held == 0 && len(s.users)+len(s.teams) == 0) {
		return nil
	}
	if err := r.waitOutbox(s.ctx); err != nil {
		return err
	}
	if len(s.users) > 0 || len(s.teams) > 0 {
		t := time.Now()
		if err := r.people(s.ctx, s.users, s.teams); err != nil {
			return err
		}
		r.stages.diff += time.Since(t)
		held += int64(len(s.users) + len(s.teams))
		s.users, s.teams = nil, nil
	}
	r.cp.Record = s.next
	r.cp.Records += held
	r.cp.Events = r.eventsBase + int64(r.h.Queued()) // the events this commit covers
	s.held = 0
	if err := r.commit(wait); err != nil {
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
	t := time.Now()
	defer func() { r.stages.relay += time.Since(t) }()
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
