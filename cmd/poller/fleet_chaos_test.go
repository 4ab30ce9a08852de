package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/audit"
)

// chaosForm is the size of a fleet chaos run. The short form runs in go test;
// the full one with CALLBUS_FLEET_CHAOS=full (see README, "Fleet chaos test").
type chaosForm struct {
	name     string
	accounts int
	rounds   int     // each round injects every kind of fault once
	speed    float64 // simulated seconds per real second
}

var (
	shortChaos = chaosForm{name: "short", accounts: 30, rounds: 1, speed: 20}
	fullChaos  = chaosForm{name: "full", accounts: 60, rounds: 3, speed: 30}
)

// chaosRemoved names the graceful removal of a poller (SIGTERM).
const chaosRemoved = "SIGTERM (poller removed)"

// chaosTally is what a run injected and measured, for the results table.
type chaosTally struct {
	faults        map[string]int
	worstFailover time.Duration // SIGKILL, SIGSTOP: until another live poller leads
	worstHandOff  time.Duration // SIGTERM: the same, after the leaving poller's drain
	failovers     int           // accounts that had to move
}

// TestFleetChaos runs a fleet of poller processes (fleet mode, accounts_dir)
// over the multi-account simulator, a 3-node NATS cluster (R3 stream) and a
// Redis Cluster, and injects in each round: SIGKILL of a poller, SIGSTOP of
// another past the lease, a poller added, one removed (SIGTERM), the loss of the
// NATS node leading the stream, and a Redis master failover. Then every account
// is audited against its truth: nothing lost, no id twice, no chain broken; the
// leases never had two holders for a token nor went back; every account was led
// again within the lease TTL (plus a margin for a loaded machine).
func TestFleetChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet chaos test in -short mode")
	}
	form := shortChaos
	if os.Getenv("CALLBUS_FLEET_CHAOS") == "full" {
		form = fullChaos
	}
	b := newFleetBed(t, form.accounts)
	b.sim.Run(t, form.speed)
	watch := watchLeases(t, b)
	js := b.stream(t)
	tally := chaosTally{faults: map[string]int{}}
	next := 1
	newPoller := func() *fleetPoller {
		p := b.start(t, fmt.Sprintf("poller-%d", next))
		next++
		return p
	}
	for range 3 {
		newPoller()
	}
	b.allLed(t, 120*time.Second)
	streamGrows(t, js, "the fleet to publish")
	run := chaosRun{b: b, watch: watch, tally: &tally, newPoller: newPoller}
	for round := range form.rounds {
		t.Logf("round %d", round+1)
		run.round(t, round)
	}
	settle := time.Now()
	b.allLed(t, 60*time.Second)
	streamGrows(t, js, "the fleet to publish after the faults")
	b.sim.Freeze()
	reports, events := b.auditAll(t, 3*time.Minute)
	b.explain(t, reports)
	t.Logf("settled %s after the last fault", time.Since(settle).Round(time.Second))
	chaosVerdict(t, form, tally, watch, reports, events)
}

// chaosRun is one chaos test's fleet, lease watch and tally.
type chaosRun struct {
	b         *fleetBed
	watch     *leaseWatch
	tally     *chaosTally
	newPoller func() *fleetPoller
}

// measure waits until every account is led by a live poller again and records
// how long the accounts victim held at 'at' waited for another leader.
func (c chaosRun) measure(t *testing.T, kind string, victim *fleetPoller, at time.Time) {
	t.Helper()
	c.b.allLed(t, 60*time.Second)
	c.watch.caughtUp(t)
	worst, moved, stuck := c.watch.failover(victim.instance, at)
	c.tally.faults[kind]++
	c.tally.failovers += moved
	// A dead poller's accounts wait for its leases to expire; a leaving one
	// first drains each account's outbox (up to the shutdown timeout).
	limit := fleetLeaseTTL + 2*time.Second
	if kind == chaosRemoved {
		c.tally.worstHandOff = max(c.tally.worstHandOff, worst)
		limit = fleetShutdown + fleetLeaseTTL
	} else {
		c.tally.worstFailover = max(c.tally.worstFailover, worst)
	}
	t.Logf("%s %s: %d accounts moved, the last after %s", kind, victim.instance, moved, worst.Round(10*time.Millisecond))
	if len(stuck) > 0 {
		t.Errorf("%s %s: accounts not led again: %v", kind, victim.instance, stuck)
	}
	if worst > limit {
		t.Errorf("%s %s: an account waited %s for a leader, more than %s", kind, victim.instance, worst, limit)
	}
}

// round injects one fault of each kind, waiting after each until every account
// is led by a live poller again.
func (c chaosRun) round(t *testing.T, round int) {
	t.Helper()
	b := c.b
	// SIGKILL: a crash; a replacement joins.
	victim := b.busiest(t)
	at := time.Now()
	b.kill(t, victim)
	c.measure(t, "SIGKILL", victim, at)
	c.newPoller()
	b.allLed(t, 60*time.Second)

	// SIGSTOP past the lease: the frozen poller's accounts move; on SIGCONT it
	// must find its leases gone and commit nothing (fencing).
	frozen := b.busiest(t)
	at = time.Now()
	frozen.signal(syscall.SIGSTOP)
	delete(b.pollers, frozen.instance) // not live while frozen
	c.measure(t, "SIGSTOP", frozen, at)
	time.Sleep(fleetLeaseTTL) // frozen a while past the hand-over, not a condition
	frozen.signal(syscall.SIGCONT)
	b.pollers[frozen.instance] = frozen
	c.tally.faults["SIGCONT"]++

	// A poller joins (accounts move to it), another leaves gracefully.
	c.newPoller()
	c.tally.faults["poller added"]++
	b.allLed(t, 60*time.Second)
	leaving := b.busiest(t)
	at = time.Now()
	b.stop(t, leaving)
	c.measure(t, chaosRemoved, leaving, at)

	// The NATS node leading the stream dies, and comes back.
	chaosNATS(t, b)
	c.tally.faults["NATS node killed"]++
	// A Redis master hands over to its replica (CLUSTER FAILOVER).
	b.redis.Failover(t, round%len(b.redis.Shards))
	c.tally.faults["Redis master failover"]++
	b.allLed(t, 60*time.Second)
}

// chaosNATS kills the node leading the stream for a few seconds, then restarts it.
func chaosNATS(t *testing.T, b *fleetBed) {
	t.Helper()
	js := b.stream(t)
	s, err := js.Stream(t.Context(), "CALLCENTER")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream info: %v", err)
	}
	if r := info.Config.Replicas; r != 3 {
		t.Fatalf("the stream has %d replicas, want 3 (CALLBUS_STREAM_REPLICAS)", r)
	}
	node := b.nats.NodeIndex(info.Cluster.Leader)
	b.nats.KillNode(node)
	time.Sleep(3 * time.Second) // the fleet runs without the node a while, not a condition
	b.nats.RestartNode(t, node)
}

// busiest is the live poller leading the most accounts (the first by name on a
// tie): the fault that hits it moves the most.
func (b *fleetBed) busiest(t *testing.T) *fleetPoller {
	led := map[string]int{}
	for _, l := range b.holders(t) {
		led[instanceOf(l.holder)]++
	}
	var best *fleetPoller
	for _, name := range slices.Sorted(maps.Keys(b.pollers)) {
		if p := b.pollers[name]; best == nil || led[name] > led[best.instance] {
			best = p
		}
	}
	return best
}

// chaosVerdict fails the test on any audit or fencing problem and prints the
// results table.
func chaosVerdict(t *testing.T, form chaosForm, tally chaosTally, watch *leaseWatch, reports map[string]*audit.Report, events int) {
	t.Helper()
	lost, dups, breaks := failAudit(t, reports, watch)
	faults := 0
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(tally.faults)) {
		faults += tally.faults[k]
		kinds = append(kinds, fmt.Sprintf("%d %s", tally.faults[k], k))
	}
	t.Logf("\n| form | accounts | pollers | faults injected | events | lost | duplicates | chain breaks | two leaders | worst failover (lease TTL %s) | worst graceful hand-off | longest leaderless |\n"+
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n| %s | %d | 3-4 | %d (%s) | %d | %d | %d | %d | %d | %s (%d accounts moved) | %s | %s |",
		fleetLeaseTTL, form.name, form.accounts, faults, strings.Join(kinds, ", "), events, lost, dups, breaks,
		len(watch.Problems()), tally.worstFailover.Round(10*time.Millisecond), tally.failovers,
		tally.worstHandOff.Round(10*time.Millisecond), watch.longestVacancy().Round(10*time.Millisecond))
}

// failAudit fails the test on every audit problem of reports (and an account
// without events) and every fencing problem watch saw, and counts the audit's
// problems by kind for the results table.
func failAudit(t *testing.T, reports map[string]*audit.Report, watch *leaseWatch) (lost, dups, breaks int) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(reports)) {
		r := reports[name]
		if r.Messages == 0 {
			t.Errorf("%s: no events at all", name)
		}
		for _, p := range r.Problems {
			switch classify(p) {
			case "lost":
				lost++
			case "duplicate":
				dups++
			default:
				breaks++
			}
			t.Errorf("%s: %s", name, p)
		}
	}
	for _, p := range watch.Problems() {
		t.Errorf("fencing: %s", p)
	}
	return lost, dups, breaks
}

// classify sorts an audit problem into lost, duplicate or chain break.
func classify(p string) string {
	switch {
	case strings.Contains(p, "already published") || strings.Contains(p, "want 1"):
		return "duplicate"
	case strings.Contains(p, "nothing published") || strings.Contains(p, ": 0 ") || strings.HasPrefix(p, "stream has"):
		return "lost"
	}
	return "chain break"
}
