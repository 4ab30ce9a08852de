package poll

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/diff"
)

// goneFunc diffs the disappearance of one entity from its list (diff.UserGone,
// diff.TeamGone).
type goneFunc func(scope diff.Scope, prev []byte, id int64, seen time.Time) (diff.Result, error)

// sweepGone announces the users or teams (kind) that have a snapshot but were
// missing from the last two complete list reads, and removes their snapshots, so
// state does not grow with entities the API no longer lists. Two reads, not one:
// a single list that drifted while it was paged must not announce a deletion. The
// first miss is remembered in memory only: after a restart an entity takes two
// more reads to go. A record the client rejected is listed all the same (its
// snapshot stays, unchanged, until it reads well); a read with a rejected record
// whose id could not be read decides nothing: no miss is counted or forgotten.
func (p *Poller) sweepGone(ctx context.Context, kind string, l listing, gone goneFunc) error {
	if l.blind {
		p.log.Warn().Str("kind", kind).Msg("gone: the list held a rejected record without a readable id; no deletion is decided from this read")
		return nil
	}
	listed := l.ids
	if p.guard.missing == nil {
		p.guard.missing = map[string]map[string]bool{}
	}
	before, now := p.guard.missing[kind], map[string]bool{}
	seen := p.now()
	bt := p.newBatcher(ctx)
	for s, err := range p.store.AllSnapshots(ctx, kind) {
		if err != nil {
			return fmt.Errorf("%s gone: read snapshots: %w", kind, err)
		}
		if listed[s.ID] {
			continue
		}
		if !before[s.ID] {
			now[s.ID] = true
			continue
		}
		id, err := strconv.ParseInt(s.ID, 10, 64)
		if err != nil {
			p.log.Error().Str("kind", kind).Str("id", s.ID).Msg("gone: snapshot under a non-numeric id; left alone")
			continue
		}
		r, err := gone(p.scope, s.Data, id, seen)
		if err != nil {
			p.log.Error().Err(err).Str("id", s.ID).Msgf("%s gone: diff failed; skipped", kind)
			continue
		}
		if err := bt.add(write{kind: kind, id: s.ID, remove: true, events: r.Events}); err != nil {
			return fmt.Errorf("%s gone: %w", kind, err)
		}
	}
	if err := bt.flush(); err != nil {
		return fmt.Errorf("%s gone: %w", kind, err)
	}
	p.guard.missing[kind] = now
	return nil
}
