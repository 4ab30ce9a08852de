package poll

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Batch limits. A commit is one Lua script, and Redis serves nobody else while
// it runs: a batch is committed once it holds maxBatchEvents events,
// maxBatchItems items or maxBatchBytes bytes (less when the store's own limits
// are lower, see newLimits), and what is queued is committed first when the
// next entity would take it past one of them. An entity's writes (its snapshot,
// its index moves and its events) land in one commit whenever the store takes
// them at once; only an entity over the store's limits alone (a call with
// thousands of participants seen for the first time) is committed in parts (see
// add).
const (
	maxBatchEvents = cursor.RecommendedMaxEvents
	maxBatchItems  = 4000
	maxBatchBytes  = 16 << 20
)

// limits are a batcher's: when it commits (batch*) and what one commit may
// hold at most (commit*, the store's).
type limits struct {
	batchEvents, batchItems, batchBytes int
	commitItems, commitBytes            int
}

// newLimits fits the batch limits under the store's hard ones.
func newLimits(items, bytes int) limits {
	l := limits{commitItems: items, commitBytes: bytes}
	l.batchItems = max(1, min(maxBatchItems, items*4/5))
	l.batchEvents = min(maxBatchEvents, l.batchItems)
	l.batchBytes = max(1, min(maxBatchBytes, bytes/4))
	return l
}

// batcher accumulates one cycle's writes and commits them in bounded, atomic
// batches. A crash between two commits leaves each committed entity consistent: its
// snapshot and the events it implies land together or not at all. An entity
// committed in parts has its snapshot in the last part, and the record it was
// diffed from stored before the first (kindParts, removed with the last): a crash
// in between leaves the old snapshot and that record, which the next cycle
// diffs again before anything else (resumeParts), so the parts come again under
// the same ids with the same bodies (the stream's duplicate window and the
// consumers drop the copies), whatever the API serves by then.
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
	lim    limits
	bytes  int // b.Bytes(), kept as entities are added
	events int // committed by this batcher
	queued int // queued into its batches, committed or not
	// trace is ctx's trace context as outbox headers, injected once for all the
	// batcher's events (traced says it was).
	trace  map[string]string
	traced bool
	one    oneEntity // the entity add is adding
	// diffs lends its memory to the diffs whose results add takes (see
	// diff.Reuse): add encodes their events before the next diff.
	diffs diff.Reuse
}

// oneEntity holds the batch of one entity (see entity): its lists are reused
// from one entity to the next, as add copies them into the batch.
type oneEntity struct {
	snap     [1]cursor.Snapshot
	del      [1]cursor.Ref
	open     [1]cursor.Tracked
	terminal [1]cursor.Tracked
	events   []event.Message
}

// newBatcher returns an empty batcher, once any earlier batcher's background
// commit has ended (tracedCycle waits for it and reports its error; this is a
// safeguard for callers that gave up on a batcher after an error).
func (p *Poller) newBatcher(ctx context.Context) *batcher {
	p.commits.wait()
	return &batcher{p: p, ctx: ctx, lim: newLimits(p.store.Limits())}
}

// write is what one observation of an entity changes; add commits it whole.
type write struct {
	kind, id string
	snap     []byte          // the entity's next snapshot; nil: unchanged
	fresh    bool            // no snapshot of it is stored (cursor.Snapshot.New)
	remove   bool            // its snapshot is deleted (gone upstream)
	open     *cursor.Tracked // the call enters the open index
	terminal *cursor.Tracked // the call enters the terminal index
	events   []events.Envelope
	// call is the observation of a call the events come from, kept in Redis
	// while they are committed in parts (resumeParts); ID 0 for other entities.
	call events.Call
}

// add queues one entity's writes. They land in one commit: the batch queued so
// far is committed first when they would take it past a batch limit. An entity
// over a commit's limits alone has its events committed first, in order, in
// parts of a batch's size; its snapshot and index moves go with the last part.
// An entity with an event no commit can hold is skipped, with an error logged.
func (bt *batcher) add(w write) error {
	e, err := bt.entity(w)
	if err != nil {
		return err
	}
	size, lim := e.Bytes(), bt.lim
	if big := largest(e.Events); big > lim.commitBytes {
		// No commit can ever hold it: skipped, or it would stop the resource.
		// Its snapshot stays, so it is read again; the changes are not published.
		bt.p.log.Error().Str("kind", w.kind).Str("id", w.id).Int("bytes", big).Int("limit", lim.commitBytes).
			Msg("an event is larger than one commit of the store may be; its entity is skipped")
		return nil
	}
	bt.queued += len(e.Events)
	if bt.b.Items() > 0 && (len(bt.b.Events)+len(e.Events) > lim.batchEvents ||
		bt.b.Items()+e.Items() > lim.batchItems || bt.bytes+size > lim.batchBytes) {
		if err := bt.ship(); err != nil {
			return err
		}
	}
	if e.Items() > lim.commitItems || size > lim.commitBytes {
		parts, err := bt.parts(w)
		if err != nil {
			return err
		}
		if parts != nil { // first, alone: the record may be as large as an event
			bt.b.Snapshots, bt.bytes = append(bt.b.Snapshots, *parts), len(parts.Data)
			if err := bt.ship(); err != nil {
				return err
			}
		}
		for len(e.Events) > lim.batchEvents || (len(e.Events) > 0 && size > lim.batchBytes) {
			n, partSize := lim.eventsUpTo(e.Events)
			bt.b.Events, bt.bytes = append(bt.b.Events, e.Events[:n]...), partSize
			if err := bt.ship(); err != nil {
				return err
			}
			e.Events, size = e.Events[n:], size-partSize
		}
		if parts != nil {
			e.Deletes = append(e.Deletes, cursor.Ref{Kind: parts.Kind, ID: parts.ID})
		}
	}
	bt.b.Snapshots = append(bt.b.Snapshots, e.Snapshots...)
	bt.b.Deletes = append(bt.b.Deletes, e.Deletes...)
	bt.b.Open = append(bt.b.Open, e.Open...)
	bt.b.Terminal = append(bt.b.Terminal, e.Terminal...)
	bt.b.Events = append(bt.b.Events, e.Events...)
	bt.bytes += size
	return bt.full()
}

// largest is the size of the largest of evs.
func largest(evs []event.Message) int {
	n := 0
	for i := range evs {
		n = max(n, cursor.Batch{Events: evs[i : i+1]}.Bytes())
	}
	return n
}

// parts is the record of an entity about to be committed in parts (nil when
// it has none to keep: see write.call).
func (bt *batcher) parts(w write) (*cursor.Snapshot, error) {
	if w.call.ID == 0 {
		return nil, nil
	}
	rec, err := json.Marshal(&w.call)
	if err != nil {
		return nil, fmt.Errorf("%s %s: keep the record of its parts: %w", w.kind, w.id, err)
	}
	if len(rec) > bt.lim.commitBytes/2 {
		return nil, nil // too large to keep: a crash between parts reads the API's copy
	}
	return &cursor.Snapshot{Kind: kindParts, ID: w.id, Data: rec}, nil
}

// eventsUpTo returns how many of evs, from the first, make one part of an entity
// too large for a commit (batchEvents, batchBytes; one event at least), and
// their bytes.
func (l limits) eventsUpTo(evs []event.Message) (n, size int) {
	for n < len(evs) && n < l.batchEvents {
		b := cursor.Batch{Events: evs[n : n+1]}.Bytes()
		if n > 0 && size+b > l.batchBytes {
			break
		}
		n, size = n+1, size+b
	}
	return n, size
}

// entity lays w out as a batch of its own, its events encoded. The batch lives
// in bt.one until the next call: add copies it into bt.b.
func (bt *batcher) entity(w write) (cursor.Batch, error) {
	o := &bt.one
	e := cursor.Batch{Events: o.events[:0]}
	if w.remove {
		o.del[0] = cursor.Ref{Kind: w.kind, ID: w.id}
		e.Deletes = o.del[:]
	}
	if w.snap != nil {
		o.snap[0] = cursor.Snapshot{Kind: w.kind, ID: w.id, Data: w.snap, New: w.fresh}
		e.Snapshots = o.snap[:]
	}
	if w.open != nil {
		o.open[0] = *w.open
		e.Open = o.open[:]
	}
	if w.terminal != nil {
		o.terminal[0] = *w.terminal
		e.Terminal = o.terminal[:]
	}
	if len(w.events) > 0 && !bt.traced {
		bt.trace, bt.traced = telemetry.Inject(bt.ctx), true
	}
	for _, ev := range w.events {
		if !bt.p.cfg.Policy.Wants(ev.Type) {
			continue // the account does not want the type: its snapshot moves on all the same
		}
		var err error
		if e.Events, err = bt.p.outboxEntries(e.Events, ev, bt.trace); err != nil {
			return cursor.Batch{}, err
		}
	}
	o.events = e.Events[:0]
	return e, nil
}

// terminal queues a call's move to the terminal index.
func (bt *batcher) terminal(t cursor.Tracked) error {
	return bt.add(write{terminal: &t})
}

// full starts committing the batch in the background once it reached a limit.
func (bt *batcher) full() error {
	if len(bt.b.Events) < bt.lim.batchEvents && bt.b.Items() < bt.lim.batchItems && bt.bytes < bt.lim.batchBytes {
		return nil
	}
	return bt.ship()
}

// ship starts committing the batch in the background, once the commit under way
// ended well, and starts an empty one.
func (bt *batcher) ship() error {
	n, err := bt.p.commits.wait()
	bt.events += n
	if err != nil {
		return err
	}
	b := bt.b
	// The next batch will most likely fill up too: room for as much at once,
	// rather than growing its lists by doubling all over again.
	bt.b = cursor.Batch{Events: make([]event.Message, 0, min(cap(b.Events), bt.lim.batchEvents)), Snapshots: make([]cursor.Snapshot, 0, cap(b.Snapshots))}
	bt.bytes = 0
	bt.p.commits.start(func() (int, error) { return bt.commit(b) })
	return nil
}

// flush commits what is queued, after any commit under way, and returns once
// everything is committed.
func (bt *batcher) flush() error {
	n, err := bt.p.commits.wait()
	bt.events += n
	if err != nil {
		bt.b, bt.bytes = cursor.Batch{}, 0
		return err
	}
	n, err = bt.commit(bt.b)
	bt.events += n
	bt.b, bt.bytes = cursor.Batch{}, 0
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
