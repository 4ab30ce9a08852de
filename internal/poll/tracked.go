package poll

import (
	"context"
	"fmt"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
)

// trackedChunk is how many tracked calls' snapshots are read at a time: memory
// holds a chunk's snapshots, not the open set's (100,000 calls of a backlog are
// open until their metric is final).
const trackedChunk = 1000

// trackedState is what the planners need of one tracked call's snapshots.
type trackedState struct {
	st          diff.CallState // zero when there is no call snapshot, or a bad one
	known       bool           // the call snapshot was read and decoded
	metricFinal bool           // its metric snapshot exists
}

// eachTracked calls f for each call of tracked, in order, with the state its
// snapshots hold, reading them a chunk at a time. It stops at f's first error and
// returns it.
func (p *Poller) eachTracked(ctx context.Context, tracked []cursor.Tracked, f func(o cursor.Tracked, s trackedState) error) error {
	ids := make([]string, 0, min(len(tracked), trackedChunk))
	for start := 0; start < len(tracked); start += trackedChunk {
		chunk := tracked[start:min(start+trackedChunk, len(tracked))]
		ids = ids[:0]
		for _, o := range chunk {
			ids = append(ids, o.ID)
		}
		calls, err := p.store.GetSnapshots(ctx, kindCall, ids)
		if err != nil {
			return fmt.Errorf("read open call snapshots: %w", err)
		}
		metrics, err := p.store.GetSnapshots(ctx, kindMetric, ids)
		if err != nil {
			return fmt.Errorf("read open call metric snapshots: %w", err)
		}
		for _, o := range chunk {
			st, err := diff.CallStateOf(calls[o.ID])
			if err := f(o, trackedState{st: st, known: err == nil, metricFinal: metrics[o.ID] != nil}); err != nil {
				return err
			}
		}
	}
	return nil
}
