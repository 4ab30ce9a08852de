//go:build e2ek8s

package e2ek8s

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
)

// rotatedKey is acct002's key after the rotation; the simulator accepts it from
// the start, the old one until the test revokes it.
const rotatedKey = "key-acct002-rotated"

// TestChart runs every scenario in order on one cluster; a scenario that fails
// leaves the later ones not run (they build on its state), and the table says so.
func TestChart(t *testing.T) {
	res := &results{}
	defer res.write()
	// acct001: the single-account release; acct002…acct021: the fleet's 20;
	// acct022: added while it runs.
	b := newBed(t, 22, func(_ int, name string, c *sim.Config) {
		c.Agents, c.Teams, c.CallRate, c.Plan = 6, 2, 3, 0
		if name == "acct002" {
			c.Keys = []sim.Key{{Key: rotatedKey, Role: sim.RoleAccountAdmin}}
		}
	})
	b.sim.Run(t, 2) // two simulated seconds per second: calls start and end during the run
	names := b.sim.Names()
	fleet := slices.Clone(names[1:21])
	s := &suite{b: b, res: res, fleet: fleet, all: names}
	b.k(t, "create", "namespace", ns)

	s.step(t, "install single-account + helm test --logs", s.installSolo)
	s.step(t, "install fleet: 3 replicas, 20 accounts from a Secret + helm test", s.installFleet)
	netpol := "NetworkPolicy: stored egress = configured URLs (not enforced)"
	if enforced() {
		netpol = "NetworkPolicy: stored egress = configured URLs, enforced by kube-router"
	}
	s.step(t, netpol, s.networkPolicy)
	for i := 1; i <= 2; i++ {
		s.step(t, fmt.Sprintf("delete the pod leading most accounts (%d)", i), s.failover)
	}
	s.step(t, "helm upgrade, changed value (rolling)", s.upgrade)
	s.step(t, "rotate acct002's key in the Secret, no restart", s.rotate)
	s.step(t, "remove acct021, add acct022, re-add acct021, no restart", s.addRemove)
	s.step(t, "kubectl drain: PDB blocks, not-ready pods evicted", s.drain)
	s.step(t, "helm rollback to revision 1 (rolling)", s.rollback)
	s.step(t, "audit: every account against the simulator's truth", s.audit)
	s.step(t, "helm uninstall: no orphans, Redis state kept", s.uninstall)
}

// suite carries the scenarios' shared state.
type suite struct {
	b      *bed
	res    *results
	fleet  []string // the fleet's accounts now
	all    []string
	failed bool
}

// step runs one scenario as a subtest and records its row; after a failure the
// rest are recorded as not run.
func (s *suite) step(t *testing.T, name string, f func(t *testing.T) string) {
	if s.failed {
		s.res.mu.Lock()
		s.res.rows = append(s.res.rows, [3]string{name, "NOT RUN", "an earlier scenario failed"})
		s.res.mu.Unlock()
		return
	}
	start := time.Now()
	ok := t.Run(strings.NewReplacer(" ", "_", ",", "", ":", "").Replace(name), func(t *testing.T) {
		measured := ""
		defer func() { s.res.add(t, name, measured+fmt.Sprintf(" (step %.0fs)", time.Since(start).Seconds())) }()
		measured = f(t)
	})
	if !ok {
		s.failed = true
	}
}

// ready waits until release's deployment has all its replicas updated and
// available, and no pod of an older ReplicaSet is left.
func (s *suite) ready(t *testing.T, release string, replicas int) {
	t.Helper()
	s.b.k(t, "rollout", "status", "deploy/"+release+"-callbus", "--timeout=5m")
	deadline := time.Now().Add(3 * time.Minute)
	for {
		all := s.b.k(t, "get", "pods", "-l", "app.kubernetes.io/instance="+release+",app.kubernetes.io/name=callbus,app.kubernetes.io/component!=test", "-o", "name")
		if n := len(strings.Fields(all)); n == replicas && len(s.b.pods(t, release)) == replicas {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: pods %q, want %d running", release, all, replicas)
		}
		time.Sleep(500 * time.Millisecond) // polling interval
	}
}

func (s *suite) installSolo(t *testing.T) string {
	start := time.Now()
	s.b.h(t, "install", "solo", s.b.chart, "--values", s.b.soloValues(t), "--wait", "--timeout", "5m")
	took := time.Since(start)
	led := s.b.waitLed(t, "solo", s.all[:1], time.Minute)
	out := s.b.h(t, "test", "solo", "--logs")
	if !strings.Contains(out, "ready: http://") {
		t.Fatalf("helm test --logs did not show the test pod's log:\n%s", out)
	}
	return fmt.Sprintf("installed in %.1fs, acct001 led %.1fs later; helm test --logs shows the pod's log", took.Seconds(), led.Seconds())
}

func (s *suite) installFleet(t *testing.T) string {
	s.b.applyAccounts(t, s.fleet, nil)
	start := time.Now()
	s.b.h(t, "install", "fleet", s.b.chart, "--values", s.b.fleetValues(t), "--wait", "--timeout", "5m")
	took := time.Since(start)
	led := s.b.waitLed(t, "fleet", s.fleet, 2*time.Minute)
	if out := s.b.h(t, "test", "fleet", "--logs"); !strings.Contains(out, "ready: http://") {
		t.Fatalf("helm test --logs:\n%s", out)
	}
	return fmt.Sprintf("installed in %.1fs, all 20 led %.1fs later, shares %s", took.Seconds(), led.Seconds(), s.balanced(t))
}

// balanced waits until the fleet's accounts are spread evenly over its pods
// (most - fewest <= 1) and returns the shares, largest first.
func (s *suite) balanced(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		pods := s.b.pods(t, "fleet")
		sh := share(s.b.holders(t, s.fleet))
		var counts []int
		for p := range pods {
			counts = append(counts, sh[p])
		}
		slices.Sort(counts)
		slices.Reverse(counts)
		desc := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(counts)), "/"), "[]")
		if len(counts) > 0 && counts[0]-counts[len(counts)-1] <= 1 {
			return desc
		}
		if time.Now().After(deadline) {
			t.Fatalf("accounts over the fleet's pods: %s, not balanced after a minute", desc)
		}
		time.Sleep(200 * time.Millisecond) // polling interval
	}
}
