//go:build e2ek8s

package e2ek8s

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// failover deletes the pod that leads most accounts (a graceful delete, as a
// rescheduling does) and measures how long until every account is led by a live
// pod, and the kubelet's slack: from the delete to that pod giving up its last lease.
func (s *suite) failover(t *testing.T) string {
	s.ready(t, "fleet", 3)
	hs := s.b.holders(t, s.fleet)
	sh := share(hs)
	victim := ""
	for p, n := range sh {
		if victim == "" || n > sh[victim] {
			victim = p
		}
	}
	start := time.Now()
	s.b.k(t, "delete", "pod", victim, "--wait=false")
	var released time.Duration
	for {
		hs := s.b.holders(t, s.fleet)
		if !slices.Contains(valuesOf(hs), victim) && released == 0 {
			released = time.Since(start)
		}
		pods := s.b.pods(t, "fleet")
		if len(unled(hs, func(h string) bool { _, ok := pods[h]; return ok && h != victim })) == 0 {
			break
		}
		if time.Since(start) > leaseTTL+time.Minute {
			t.Fatalf("after %s, accounts still unled: %v", time.Since(start), unled(hs, func(h string) bool { _, ok := pods[h]; return ok && h != victim }))
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	all := time.Since(start)
	if released == 0 {
		released = all
	}
	// The bound: the lease TTL after the pod stopped renewing, which is after the
	// kubelet delivered SIGTERM and the pod drained (the slack, measured).
	if all > released+leaseTTL {
		t.Errorf("accounts led again %.2fs after the delete, over the slack %.2fs + lease TTL %s", all.Seconds(), released.Seconds(), leaseTTL)
	}
	s.ready(t, "fleet", 3)
	return fmt.Sprintf("%s led %d; all led again after %.2fs (kubelet slack to its last release %.2fs, bound slack + TTL %s); then %s",
		victim[strings.LastIndex(victim, "-")+1:], sh[victim], all.Seconds(), released.Seconds(), leaseTTL, s.balanced(t))
}

func valuesOf(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// rollout applies change (an upgrade or a rollback) while tracking the leases:
// every account must stay led but for hand-offs, and should move as few times as
// the membership change needs.
func (s *suite) rollout(t *testing.T, change func()) string {
	s.ready(t, "fleet", 3)
	before := s.b.pods(t, "fleet")
	tr := s.b.track(t, s.fleet)
	start := time.Now()
	change()
	s.ready(t, "fleet", 3)
	s.b.waitLed(t, "fleet", s.fleet, time.Minute)
	took := time.Since(start)
	most, total, gap := tr.end()
	for p := range s.b.pods(t, "fleet") {
		if _, old := before[p]; old {
			t.Errorf("pod %s was not replaced", p)
		}
	}
	if gap > leaseTTL+10*time.Second {
		t.Errorf("an account was leaderless for %.2fs", gap.Seconds())
	}
	return fmt.Sprintf("rolled in %.1fs; moves per account: most %d, total %d for %d accounts; longest leaderless %.2fs; then %s",
		took.Seconds(), most, total, len(s.fleet), gap.Seconds(), s.balanced(t))
}

func (s *suite) upgrade(t *testing.T) string {
	return s.rollout(t, func() {
		s.b.h(t, "upgrade", "fleet", s.b.chart, "--reuse-values", "--set", "config.calls_interval_seconds=3", "--wait", "--timeout", "5m")
	})
}

func (s *suite) rollback(t *testing.T) string {
	return s.rollout(t, func() { s.b.h(t, "rollback", "fleet", "1", "--wait", "--timeout", "5m") })
}
