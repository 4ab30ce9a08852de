package poll

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
)

// resumeParts finishes the calls that a crash (or a failed commit) left
// committed in part: the record each was diffed from, kept while its parts were
// committed (kindParts, see batcher.add), is diffed again against the call's
// snapshot, which gives the parts already committed again under the same ids and
// bodies (dropped downstream as copies) and the rest; the call's snapshot then
// lands with its last part, which removes the record. It commits before the
// cycle reads the API, so that the list diffs the call against the snapshot it
// ends with, and the changes the API shows since follow as events of their own.
func (p *Poller) resumeParts(ctx context.Context, bt *batcher) error {
	var ids []string
	var recs [][]byte
	for s, err := range p.store.AllSnapshots(ctx, kindParts) {
		if err != nil {
			return fmt.Errorf("calls: read the calls committed in part: %w", err)
		}
		ids, recs = append(ids, s.ID), append(recs, s.Data)
	}
	if len(ids) == 0 {
		return nil
	}
	snaps, err := p.store.GetSnapshots(ctx, kindCall, ids)
	if err != nil {
		return fmt.Errorf("calls: read snapshots of the calls committed in part: %w", err)
	}
	for i, id := range ids {
		var c events.Call
		if err := json.Unmarshal(recs[i], &c); err != nil || strconv.FormatInt(c.ID, 10) != id {
			p.log.Error().Err(err).Str("call_id", id).Msg("calls: the record of a call committed in part cannot be read; the call is diffed from the API's copy")
		} else if _, err := p.diffCall(bt, id, snaps[id], c, time.Time{}); err != nil {
			return err
		}
		// Gone with the call's last part already; else (no change left, or
		// unreadable) it would be read again every cycle.
		if err := bt.add(write{kind: kindParts, id: id, remove: true}); err != nil {
			return fmt.Errorf("calls: %w", err)
		}
	}
	p.log.Warn().Int("calls", len(ids)).Msg("calls: finished calls whose commit in parts was cut short")
	if err := bt.flush(); err != nil {
		return fmt.Errorf("calls: %w", err)
	}
	return nil
}
