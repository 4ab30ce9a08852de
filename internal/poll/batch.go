package poll

import (
	"context"
	"fmt"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Batch limits: a commit is one Lua script; keep it well under the store's hard
// limit. One entity's events never straddle two commits.
const (
	maxBatchEvents = cursor.RecommendedMaxEvents
	maxBatchItems  = 4000
)

// batcher accumulates one cycle's writes and commits them in bounded, atomic
// batches. A crash between two commits leaves each committed entity consistent: its
// snapshot and the events it implies land together or not at all.
//
// A batch that fills up is committed in the background (see committer) while the
// cycle goes on diffing the next records: their entities are others (each record
// is diffed once a cycle), so none of them reads a snapshot still on its way to
// Redis. Commits stay one at a time and in order, each fenced as before; the
// first failure refuses every later batch of the cycle. flush commits the rest
// and returns only once everything is in Redis.
type batcher struct {
	p      *Poller
	ctx    context.Context
	b      cursor.Batch
	events int // committed by this batcher
	// trace is ctx's trace context as outbox headers, injected once for all the
	// batcher's events (traced says it was).
	trace  map[string]string
	traced bool
}

// newBatcher returns an empty batcher, once any earlier batcher's background
// commit has ended (tracedCycle waits for it and reports its error; this is a
// safeguard for callers that gave up on a batcher after an error).
func (p *Poller) newBatcher(ctx context.Context) *batcher {
	p.commits.wait()
	return &batcher{p: p, ctx: ctx}
}

// add queues one entity's new snapshot (nil: unchanged) and its events.
func (bt *batcher) add(kind, id string, snap []byte, evs []event.Envelope) error {
	if snap != nil {
		bt.b.Snapshots = append(bt.b.Snapshots, cursor.Snapshot{Kind: kind, ID: id, Data: snap})
	}
	if !bt.traced && len(evs) > 0 {
		bt.trace, bt.traced = telemetry.Inject(bt.ctx), true
	}
	for _, e := range evs {
		entry, err := bt.p.outboxEntry(e, bt.trace)
		if err != nil {
			return err
		}
		bt.b.Events = append(bt.b.Events, entry)
	}
	return bt.full()
}

// terminal queues a call's move to the terminal index.
func (bt *batcher) terminal(t cursor.Tracked) error {
	bt.b.Terminal = append(bt.b.Terminal, t)
	return bt.full()
}

// full starts committing the batch in the background once it reached a limit.
func (bt *batcher) full() error {
	if len(bt.b.Events) < maxBatchEvents && bt.b.Items() < maxBatchItems {
		return nil
	}
	n, err := bt.p.commits.wait()
	bt.events += n
	if err != nil {
		return err
	}
	b := bt.b
	// The next batch will most likely fill up too: room for as much at once,
	// rather than growing its lists by doubling all over again.
	bt.b = cursor.Batch{Events: make([]cursor.OutboxEntry, 0, cap(b.Events)), Snapshots: make([]cursor.Snapshot, 0, cap(b.Snapshots))}
	bt.p.commits.start(func() (int, error) { return bt.commit(b) })
	return nil
}

// flush commits what is queued, after any commit under way, and returns once
// everything is committed.
func (bt *batcher) flush() error {
	n, err := bt.p.commits.wait()
	bt.events += n
	if err != nil {
		bt.b = cursor.Batch{}
		return err
	}
	n, err = bt.commit(bt.b)
	bt.events += n
	bt.b = cursor.Batch{}
	return err
}

// commit commits b, fenced by the lease, and returns its events' count.
func (bt *batcher) commit(b cursor.Batch) (int, error) {
	if b.Items() == 0 {
		return 0, nil
	}
	ctx, span := bt.p.tracer.Start(bt.ctx, "redis commit", trace.WithAttributes(
		attribute.Int("callbus.events", len(b.Events)), attribute.Int("callbus.snapshots", len(b.Snapshots))))
	defer span.End()
	res, err := bt.p.store.Commit(ctx, bt.p.lease(), bt.p.guarded(b))
	bt.p.noteCommit(res, err)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return 0, fmt.Errorf("commit %d events, %d snapshots: %w", len(b.Events), len(b.Snapshots), err)
	}
	bt.p.committed(b)
	return len(b.Events), nil
}

func (bt *batcher) cursor(name, value string) {
	if bt.b.Cursors == nil {
		bt.b.Cursors = map[string]string{}
	}
	bt.b.Cursors[name] = value
}

// committer runs at most one commit in the background. It is used by the poller's
// goroutine only (start and wait); the commit's goroutine hands its result over
// through the channel.
type committer struct {
	done chan commitResult // the commit under way; nil when none
}

type commitResult struct {
	events int
	err    error
}

// start runs f in the background; the caller waited for the previous one.
func (c *committer) start(f func() (int, error)) {
	done := make(chan commitResult, 1)
	c.done = done
	go func() {
		n, err := f()
		done <- commitResult{n, err}
	}()
}

// wait returns once no commit is under way, with the result of the one that was
// (0, nil when none).
func (c *committer) wait() (int, error) {
	if c.done == nil {
		return 0, nil
	}
	r := <-c.done
	c.done = nil
	return r.events, r.err
}
