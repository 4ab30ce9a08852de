package fleet

import (
	"context"
	"slices"
	"time"
)

// refresh reads the live members and the accounts' arrivals, renewing this
// replica's membership (and recording the arrivals of the accounts it holds)
// when a heartbeat is due (every TTL/3), forced, or when the membership is
// missing (Redis lost it, or this replica was too late). On failure the members
// last read stay.
func (l *loop) refresh(ctx context.Context, force bool) {
	now := time.Now()
	beat := force || now.Sub(l.lastBeat) >= l.f.ttl/3
	// The accounts whose lease this replica held at the last read: their
	// arrival is recorded once it holds them, not when it starts waiting for them
	// (another replica may keep them). Only Assign (WithHolders) uses arrivals.
	var running []string
	for a, h := range l.lastHeld {
		if h == l.f.replica {
			running = append(running, a)
		}
	}
	ms, arrived, err := l.f.readMembers(ctx, beat, running)
	if err == nil && !beat && !slices.ContainsFunc(ms, func(m Member) bool { return m.Name == l.f.replica }) {
		beat = true
		ms, arrived, err = l.f.readMembers(ctx, true, running)
	}
	if err != nil {
		l.failed(ctx, err)
		return
	}
	if beat {
		l.lastBeat = now
	}
	if l.unreachable {
		l.unreachable = false
		l.f.log.Info().Msg("fleet: Redis reachable again")
	}
	l.arrived = arrived
	l.setMembers(ms)
}

// failed logs a failed call to Redis: the first of a run, then one every TTL/3
// at most, loudly once the membership has surely expired.
func (l *loop) failed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return // shutting down
	}
	first := !l.unreachable
	l.unreachable = true
	if !first && time.Since(l.lastFailLog) < l.f.ttl/3 {
		return
	}
	l.lastFailLog = time.Now()
	ev := l.f.log.Warn()
	if !l.lastBeat.IsZero() && time.Since(l.lastBeat) > l.f.ttl {
		ev = l.f.log.Error()
	}
	ev.Err(err).Time("last_heartbeat", l.lastBeat).Int("owned", len(l.f.Owned())).
		Msg("fleet: Redis unreachable; the accounts this replica runs keep running (their leases fence them), the others may take them once this membership expires")
}

// setMembers stores ms and logs who joined and who left.
func (l *loop) setMembers(ms []Member) {
	l.f.mu.Lock()
	old := l.f.members
	l.f.members = ms
	l.f.mu.Unlock()
	in := func(list []Member, name string) bool {
		return slices.ContainsFunc(list, func(m Member) bool { return m.Name == name })
	}
	for _, m := range ms {
		if !in(old, m.Name) {
			l.f.log.Info().Str("member", m.Name).Int64("joined_ms", m.Joined).Int("members", len(ms)).Msg("fleet: member joined")
		}
	}
	for _, m := range old {
		if !in(ms, m.Name) {
			l.f.log.Info().Str("member", m.Name).Int("members", len(ms)).Msg("fleet: member left")
		}
	}
}
