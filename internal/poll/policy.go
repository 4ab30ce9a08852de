package poll

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/diff"
	"github.com/callbus/callbus/internal/policy"
)

// cursorPolicy is the version of the data policy the state's snapshots were
// written under (policyKeep for none, and for a state older than the cursor).
const cursorPolicy = "data_policy"

// policyKeep stands for "no policy" in the cursor: every field kept.
const policyKeep = "keep"

// storedPolicy is p's version as the cursor holds it.
func storedPolicy(p *policy.Policy) string {
	if v := p.Version(); v != "" {
		return v
	}
	return policyKeep
}

// checkPolicy compares the policy the state was written under (stored, the
// cursor; "" for a state from before it) with the poller's. When they differ,
// the snapshots of calls and users hold personal fields in the old form (raw
// where they are now hashed, hashed under an old key, ...): the next complete
// cycle of each of those resources stores the fields' new form silently (no
// event for a change that is only the policy's), and the cycle after it
// announces changes again, from the new form (rebased writes the cursor).
func (p *Poller) checkPolicy(stored string) {
	if stored == "" {
		stored = policyKeep
	}
	want := storedPolicy(p.cfg.Policy)
	p.rebase = nil
	if stored == want {
		return
	}
	p.rebase = map[string]bool{}
	for _, res := range []string{ResCalls, ResUsers} {
		if _, polled := p.cfg.Intervals[res]; polled {
			p.rebase[res] = true
		}
	}
	p.log.Info().Str("from", stored).Str("to", want).Strs("resources", slices.Sorted(maps.Keys(p.rebase))).
		Msg("data policy changed: the next cycle of each resource stores personal fields in their new form without events")
}

// scopeFor is the diff scope of res's cycle: while res re-baselines, every
// personal field a policy may change is silent.
func (p *Poller) scopeFor(res string) diff.Scope {
	s := p.scope
	if p.rebase[res] {
		s.Silent = policy.TrackedFields()
	}
	return s
}

// rebased ends res's re-baseline after a complete cycle; the last one to end
// records the new policy in the state, so that a restart does not re-baseline
// again. A failed write is logged: the next term re-baselines again, silently.
func (p *Poller) rebased(ctx context.Context, res string) {
	if !p.rebase[res] {
		return
	}
	delete(p.rebase, res)
	if len(p.rebase) > 0 {
		return
	}
	p.rebase = nil
	bt := p.newBatcher(ctx)
	bt.cursor(cursorPolicy, storedPolicy(p.cfg.Policy))
	if err := bt.flush(); err != nil {
		if !errors.Is(err, cursor.ErrStaleLeader) {
			p.log.Warn().Err(err).Msg("data policy: record the re-baseline; the next term does it again")
		}
		return
	}
	p.log.Info().Str("policy", storedPolicy(p.cfg.Policy)).Msg("data policy: snapshots re-baselined")
}
