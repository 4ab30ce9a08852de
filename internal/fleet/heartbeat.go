package fleet

import (
	"context"
	"slices"
	"time"
)

// refresh reads the live members, renewing this replica's membership when a
// heartbeat is due (every TTL/3) or when the membership is missing (Redis lost
// it, or this replica was too late). On failure the members last read stay.
func (l *loop) refresh(ctx context.Context) {
	now := time.Now()
	beat := now.Sub(l.lastBeat) >= l.f.ttl/3
	ms, err := l.f.readMembers(ctx, beat)
	if err == nil && !beat && !slices.Contains(ms, l.f.replica) {
		beat = true
		ms, err = l.f.readMembers(ctx, true)
	}
	if err != nil {
		l.failed(ctx, err, beat)
		return
	}
	if beat {
		l.lastBeat = now
	}
	if l.unreachable {
		l.unreachable = false
		l.f.log.Info().Msg("fleet: Redis reachable again")
	}
	l.setMembers(ms)
}

// failed logs a failed call to Redis: the first of a run, then every failed
// heartbeat, loudly once the membership has surely expired.
func (l *loop) failed(ctx context.Context, err error, beat bool) {
	if ctx.Err() != nil {
		return // shutting down
	}
	first := !l.unreachable
	l.unreachable = true
	if !first && !beat {
		return
	}
	ev := l.f.log.Warn()
	if !l.lastBeat.IsZero() && time.Since(l.lastBeat) > l.f.ttl {
		ev = l.f.log.Error()
	}
	ev.Err(err).Time("last_heartbeat", l.lastBeat).Strs("owned", l.f.Owned()).
		Msg("fleet: Redis unreachable; the accounts this replica runs keep running (their leases fence them), the others may take them once this membership expires")
}

// setMembers stores ms and logs who joined and who left.
func (l *loop) setMembers(ms []string) {
	l.f.mu.Lock()
	old := l.f.members
	l.f.members = ms
	l.f.mu.Unlock()
	for _, m := range ms {
		if !slices.Contains(old, m) {
			l.f.log.Info().Str("member", m).Int("members", len(ms)).Msg("fleet: member joined")
		}
	}
	for _, m := range old {
		if !slices.Contains(ms, m) {
			l.f.log.Info().Str("member", m).Int("members", len(ms)).Msg("fleet: member left")
		}
	}
}
