//go:build e2ek8s

package e2ek8s

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// waitUntil polls cond every 200 ms until it holds or limit passes.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not after %s", what, limit)
		}
		time.Sleep(200 * time.Millisecond) // polling interval
	}
	return time.Since(start)
}

// sameFleet fails t if the fleet's pods are not those of before or restarted.
func (s *suite) sameFleet(t *testing.T, before map[string]corev1.Pod) {
	t.Helper()
	now := s.b.pods(t, "fleet")
	if !slices.Equal(slices.Sorted(maps.Keys(now)), slices.Sorted(maps.Keys(before))) || restarts(now) != restarts(before) {
		t.Errorf("pods changed or restarted: before %v (%d restarts), now %v (%d)", slices.Sorted(maps.Keys(before)), restarts(before),
			slices.Sorted(maps.Keys(now)), restarts(now))
	}
}

// rotate writes acct002's new key into the Secret, waits until the API sees it,
// then revokes the old one: the pods read the new file without restarting.
func (s *suite) rotate(t *testing.T) string {
	s.ready(t, "fleet", 3)
	before := s.b.pods(t, "fleet")
	s.b.applyAccounts(t, s.fleet, map[string]string{"acct002": rotatedKey})
	took := waitUntil(t, 3*time.Minute, "acct002 calling with the rotated key", func() bool { return s.b.gate.uses("acct002", rotatedKey) > 0 })
	s.b.gate.revoke("key-acct002")
	old := s.b.gate.uses("acct002", "key-acct002")
	n := s.b.gate.uses("acct002", rotatedKey)
	waitUntil(t, time.Minute, "acct002 polling on", func() bool { return s.b.gate.uses("acct002", rotatedKey) > n+10 })
	if late := s.b.gate.uses("acct002", "key-acct002") - old; late > 2 {
		t.Errorf("the old key was still used %d times after the new one", late)
	}
	s.sameFleet(t, before)
	return fmt.Sprintf("new key in use %.1fs after the Secret's update (kubelet sync + rescan); old key unused since; same pods, no restart", took.Seconds())
}

// addRemove removes acct021's files, adds acct022's, then puts acct021 back.
func (s *suite) addRemove(t *testing.T) string {
	s.ready(t, "fleet", 3)
	before := s.b.pods(t, "fleet")
	keys := map[string]string{"acct002": rotatedKey}
	without := append(slices.Clone(s.fleet[:19]), "acct022")
	s.b.applyAccounts(t, without, keys)
	added := s.b.waitLed(t, "fleet", []string{"acct022"}, 3*time.Minute)
	gone := waitUntil(t, time.Minute, "acct021 given up", func() bool { return s.b.holders(t, []string{"acct021"})["acct021"] == "" })
	s.fleet = append(without, "acct021")
	s.b.applyAccounts(t, s.fleet, keys)
	back := s.b.waitLed(t, "fleet", s.fleet, 3*time.Minute)
	s.sameFleet(t, before)
	return fmt.Sprintf("acct022 led %.1fs after the update, acct021 released %.1fs after that, back in %.1fs; same pods, no restart",
		added.Seconds(), gone.Seconds(), back.Seconds())
}

// drain drains the node twice: with every pod ready the PDB (maxUnavailable 1)
// lets one fleet pod go and blocks the rest; with Redis stopped (every pod not
// ready) unhealthyPodEvictionPolicy AlwaysAllow lets the drain through.
func (s *suite) drain(t *testing.T) string {
	s.ready(t, "fleet", 3)
	out, err := run(t.Context(), 2*time.Minute, s.b.kubectl, "drain", "local", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=45s")
	if err == nil {
		t.Fatalf("drain went through the PDB:\n%s", out)
	}
	if !strings.Contains(out, "disruption budget") {
		t.Errorf("drain did not name the disruption budget:\n%s", out)
	}
	if n := len(s.b.pods(t, "fleet")); n != 2 {
		t.Errorf("%d fleet pods running after the blocked drain, want 2 (maxUnavailable 1)", n)
	}
	s.b.redis.Pause(t)
	notReady := waitUntil(t, 2*time.Minute, "fleet pods not ready with Redis stopped", func() bool {
		for _, p := range s.b.pods(t, "fleet") {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return false
				}
			}
		}
		return true
	})
	start := time.Now()
	out, err = run(t.Context(), 4*time.Minute, s.b.kubectl, "drain", "local", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=3m")
	drained := time.Since(start)
	s.b.redis.Resume(t)
	s.b.k(t, "uncordon", "local")
	if err != nil {
		t.Fatalf("drain of not-ready pods blocked: %v", err)
	}
	s.ready(t, "fleet", 3)
	s.ready(t, "solo", 1)
	s.b.waitLed(t, "fleet", s.fleet, 2*time.Minute)
	return fmt.Sprintf("ready: 1 evicted, then blocked by the PDB; Redis stopped: not ready in %.0fs, drained in %.1fs; back after uncordon",
		notReady.Seconds(), drained.Seconds())
}
