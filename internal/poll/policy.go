package poll

import (
	"context"
	"fmt"

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
// cursor; "" for a state from before it) with the poller's, before the term's
// first cycle. When they differ, the snapshots of calls and users hold
// personal fields in the old form (raw where they are now hashed, hashed under
// a rotated key, ...): every call and user snapshot loses its personal fields
// (diff.ForgetCallFields), in fenced commits, and the cursor takes the new
// version with the last. A field missing from a snapshot is stored at the
// entity's next observation without an event, so the change of policy is no
// storm of "changes" that are only the hashing, and no old value stays in the
// snapshots. A change of the field after that is announced as usual, its
// previous and current in the new form. Interrupted, the next term does it
// again (the cursor still names the old version).
func (p *Poller) checkPolicy(ctx context.Context, stored string) error {
	if stored == "" {
		stored = policyKeep
	}
	want := storedPolicy(p.cfg.Policy)
	if stored == want {
		return nil
	}
	fields := policy.TrackedFields()
	bt := p.newBatcher(ctx)
	n := 0
	for _, kind := range []string{kindCall, kindUser} {
		for s, err := range p.store.AllSnapshots(ctx, kind) {
			if err != nil {
				return fmt.Errorf("data policy: read %s snapshots: %w", kind, err)
			}
			next, changed, err := forgetFields(kind, s.Data, fields)
			if err != nil {
				p.log.Warn().Err(err).Str("kind", kind).Str("id", s.ID).Msg("data policy: snapshot unreadable; left as it is")
				continue
			}
			if !changed {
				continue
			}
			n++
			if err := bt.add(write{kind: kind, id: s.ID, snap: next}); err != nil {
				return fmt.Errorf("data policy: rewrite %s %s: %w", kind, s.ID, err)
			}
		}
	}
	bt.cursor(cursorPolicy, want)
	if err := bt.flush(); err != nil {
		return fmt.Errorf("data policy: re-baseline: %w", err)
	}
	p.log.Info().Str("from", stored).Str("to", want).Int("snapshots", n).
		Msg("data policy changed: personal fields removed from the snapshots; each is stored in its new form at its next read, without an event")
	return nil
}

// forgetFields removes the personal fields from a snapshot of kind.
func forgetFields(kind string, snap []byte, fields []string) ([]byte, bool, error) {
	if kind == kindUser {
		return diff.ForgetUserFields(snap, fields)
	}
	return diff.ForgetCallFields(snap, fields, nil)
}
