package poll

import (
	"context"
	"fmt"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
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
type batcher struct {
	p      *Poller
	ctx    context.Context
	b      cursor.Batch
	events int // committed by this batcher
}

func (p *Poller) newBatcher(ctx context.Context) *batcher {
	return &batcher{p: p, ctx: ctx}
}

// add queues one entity's new snapshot (nil: unchanged) and its events.
func (bt *batcher) add(kind, id string, snap []byte, evs []event.Envelope) error {
	if snap != nil {
		bt.b.Snapshots = append(bt.b.Snapshots, cursor.Snapshot{Kind: kind, ID: id, Data: snap})
	}
	for _, e := range evs {
		entry, err := bt.p.outboxEntry(bt.ctx, e)
		if err != nil {
			return err
		}
		bt.b.Events = append(bt.b.Events, entry)
	}
	if len(bt.b.Events) >= maxBatchEvents || bt.b.Items() >= maxBatchItems {
		return bt.flush()
	}
	return nil
}

// flush commits what is queued.
func (bt *batcher) flush() error {
	if bt.b.Items() == 0 {
		return nil
	}
	ctx, span := bt.p.tracer.Start(bt.ctx, "redis commit", trace.WithAttributes(
		attribute.Int("callbus.events", len(bt.b.Events)), attribute.Int("callbus.snapshots", len(bt.b.Snapshots))))
	res, err := bt.p.store.Commit(ctx, bt.p.lease(), bt.p.guarded(bt.b))
	bt.p.noteCommit(res, err)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return fmt.Errorf("commit %d events, %d snapshots: %w", len(bt.b.Events), len(bt.b.Snapshots), err)
	}
	span.End()
	bt.events += len(bt.b.Events)
	bt.p.committed(bt.b)
	bt.b = cursor.Batch{}
	return nil
}

func (bt *batcher) cursor(name, value string) {
	if bt.b.Cursors == nil {
		bt.b.Cursors = map[string]string{}
	}
	bt.b.Cursors[name] = value
}
