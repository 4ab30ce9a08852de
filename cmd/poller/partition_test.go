package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// The partition scenarios (docs/partitions.md): each runs pollers, Redis and
// NATS in namespaces of their own (partition_bed_test.go), injects one kind of
// network fault while the simulator runs at 20× and audits every account's
// stream against the simulator's truth and the lease record (verdict).

// partSpeed is the simulator's speed in every scenario.
const partSpeed = 20

// partStart is the usual start: accounts, the engines (newPartBed) and pollers
// named poller-1…, the clock running at speed, every account led and the stream growing, the lease watch on.
func partStart(t *testing.T, accounts, natsNodes, redisShards, pollers int, speed float64, extra ...string) (*partBed, *leaseWatch) {
	t.Helper()
	b := newPartBed(t, accounts, natsNodes, redisShards)
	b.sim.Run(t, speed)
	watch := watchLeases(t, b.fleetBed)
	for i := range pollers {
		b.startPoller(t, fmt.Sprintf("poller-%d", i+1), extra...)
	}
	b.allLed(t, 120*time.Second)
	b.grows(t, "the fleet to publish")
	return b, watch
}

// cutOff cuts p from node both ways for hold, waits for the other pollers to
// lead every account meanwhile, then heals; it says how long the takeover of
// p's accounts took.
func (b *partBed) cutOff(t *testing.T, watch *leaseWatch, p *fleetPoller, node string, hold time.Duration) string {
	t.Helper()
	b.net.Cut(p.instance, node)
	return b.outage(t, watch, p, hold)
}

// outage holds a fault that cut p off for hold, waiting for the other pollers
// to lead every account meanwhile, then heals, and says how long the takeover
// of p's accounts took (from the cut until another poller held each lease).
func (b *partBed) outage(t *testing.T, watch *leaseWatch, p *fleetPoller, hold time.Duration) string {
	t.Helper()
	at := time.Now()
	b.away(p)
	b.allLed(t, hold+60*time.Second)
	watch.caughtUp(t)
	worst, moved, _ := watch.failover(p.instance, at)
	if moved == 0 {
		t.Errorf("%s led no account when it was cut off: the fault tested no takeover", p.instance)
	}
	time.Sleep(time.Until(at.Add(hold))) // the cut lasts hold: a fault's length, not a wait for a condition
	b.net.HealAll()
	b.back(p)
	return fmt.Sprintf("%d accounts taken over, the last after %s", moved, worst.Round(100*time.Millisecond))
}

// leading is the busiest live poller once the lease watch has seen it lead an
// account (accounts may be moving between pollers right after the start).
func (b *partBed) leading(t *testing.T, watch *leaseWatch) *fleetPoller {
	t.Helper()
	var p *fleetPoller
	simtest.WaitFor(t, 60*time.Second, "a poller to lead an account", func() bool {
		p = b.busiest(t)
		watch.caughtUp(t)
		led := 0
		for _, l := range b.holders(t) {
			if instanceOf(l.holder) == p.instance {
				led++
			}
		}
		_, moved, _ := watch.failover(p.instance, time.Now())
		return led > 0 && moved > 0
	})
	return p
}

// stoodDown waits until p's log says it gave its leases up: it could not renew
// (the cut) or found them taken (back after it).
func stoodDown(t *testing.T, p *fleetPoller) {
	t.Helper()
	simtest.WaitFor(t, 30*time.Second, p.instance+" to stand down", func() bool {
		log := p.stderr.String()
		return strings.Contains(log, "lease: cannot renew; stepping down") || strings.Contains(log, "lease: lost to another replica; standing by")
	})
}

// TestPartitionRedisCut: the leader loses Redis for three lease TTLs (a silent
// cut, not a refused connection). A standby takes its accounts over; the
// cut-off leader's commits are refused by the fence, and it stands down when it
// is back.
func TestPartitionRedisCut(t *testing.T) {
	b, watch := partStart(t, 3, 1, 0, 2, partSpeed)
	leader := b.leading(t, watch)
	took := b.cutOff(t, watch, leader, "redis", 3*fleetLeaseTTL)
	stoodDown(t, leader)
	b.verdict(t, "poller ↔ Redis cut (3 × TTL)", "1 cut of "+(3*fleetLeaseTTL).String()+"; "+took, watch)
}

// TestPartitionAsymmetric: Redis executes the leader's commands but its replies
// are dropped (Redis → leader cut, leader → Redis open): the leader cannot know
// its lease was renewed or its commit applied, so it must stop before the TTL
// while a standby takes over.
func TestPartitionAsymmetric(t *testing.T) {
	b, watch := partStart(t, 3, 1, 0, 2, partSpeed)
	leader := b.leading(t, watch)
	b.net.CutOneWay("redis", leader.instance)
	took := b.outage(t, watch, leader, 3*fleetLeaseTTL)
	stoodDown(t, leader)
	b.verdict(t, "asymmetric: Redis's replies to the leader dropped", "1 one-way cut of "+(3*fleetLeaseTTL).String()+"; "+took, watch)
}

// TestPartitionNATSCut: the only poller loses NATS. Its outbox grows to the
// bound (CALLBUS_OUTBOX_MAX_EVENTS), polling pauses there, nothing is dropped,
// and after the heal everything drains in order.
func TestPartitionNATSCut(t *testing.T) {
	// The smallest bound allowed, reached in well under a minute at 150×.
	const bound = 1000
	b, watch := partStart(t, 1, 1, 0, 1, 150, fmt.Sprintf("CALLBUS_OUTBOX_MAX_EVENTS=%d", bound))
	p := b.pollers["poller-1"]
	b.net.Cut(p.instance, "nats-1")
	simtest.WaitFor(t, 3*time.Minute, "polling to pause at the outbox bound", func() bool {
		return strings.Contains(p.stderr.String(), "outbox full")
	})
	peak := b.outboxes(t)
	if peak < bound {
		t.Errorf("polling paused with %d events in the outbox, under the bound %d", peak, bound)
	}
	// Paused means paused: a while later the outbox holds no more than it did
	// (a cycle already past the check may add its events once).
	time.Sleep(5 * time.Second) // a few poll intervals while paused, not a wait for a condition
	if after := b.outboxes(t); after > peak+bound {
		t.Errorf("the outbox grew from %d to %d while polling was paused", peak, after)
	}
	b.net.HealAll()
	simtest.WaitFor(t, 2*time.Minute, "the outbox to drain after the heal", func() bool { return b.outboxes(t) == 0 })
	b.verdict(t, "poller ↔ NATS cut, outbox bound "+fmt.Sprint(bound), fmt.Sprintf("1 cut until the bound, peak outbox %d", peak), watch)
}

// TestPartitionFlap: the link between the leader and Redis goes down and up
// every 1-5 s, and so does its link to NATS, for faultFor.
func TestPartitionFlap(t *testing.T) {
	b, watch := partStart(t, 3, 1, 0, 2, partSpeed)
	leader := b.busiest(t)
	redisFlap := b.net.Flap(leader.instance, "redis", time.Second, 5*time.Second, 1)
	natsFlap := b.net.Flap(leader.instance, "nats-1", time.Second, 5*time.Second, 2)
	time.Sleep(faultFor()) // the fault's length, not a wait for a condition
	downs := redisFlap.Downs() + natsFlap.Downs()
	b.net.HealAll()
	b.verdict(t, "flapping leader ↔ Redis and ↔ NATS, 1-5 s", fmt.Sprintf("%d link downs in %s", downs, faultFor()), watch)
}

// TestPartitionSlowLossy: every link delays packets 200 ms ± 100 ms (so they
// arrive out of order) and drops 5% of them, for faultFor.
func TestPartitionSlowLossy(t *testing.T) {
	b, watch := partStart(t, 3, 1, 0, 2, partSpeed)
	b.net.Loss(0.05)
	b.net.Delay(200*time.Millisecond, 100*time.Millisecond, 1)
	time.Sleep(faultFor()) // the fault's length, not a wait for a condition
	b.net.HealAll()
	b.verdict(t, "200 ms ± 100 ms delay, 5% loss, every link", "delay+loss for "+faultFor().String(), watch)
}

// TestPartitionFleet: three pollers share 30 accounts; one loses Redis but
// keeps NATS for three lease TTLs. Its accounts move to the other two; its
// relay, which still reaches NATS, must publish nothing it is not fenced for.
func TestPartitionFleet(t *testing.T) {
	b, watch := partStart(t, 30, 1, 0, 3, partSpeed)
	// The first poller up takes every account; the share-out moves them to
	// the others by hand-offs. The cut comes once each leads some.
	simtest.WaitFor(t, 2*time.Minute, "the accounts to be shared out", func() bool {
		led := map[string]int{}
		for _, l := range b.holders(t) {
			led[instanceOf(l.holder)]++
		}
		return led["poller-1"] >= 5 && led["poller-2"] >= 5 && led["poller-3"] >= 5
	})
	victim := b.busiest(t)
	took := b.cutOff(t, watch, victim, "redis", 3*fleetLeaseTTL)
	b.verdict(t, "fleet: 3 pollers, 30 accounts, one cut from Redis", "1 cut of "+(3*fleetLeaseTTL).String()+"; "+took, watch)
}

// TestPartitionStreamLeader: a 3-node JetStream cluster, the stream R3. The node
// leading the stream is isolated with a minority, the poller leading the most
// accounts (which keeps Redis, so it keeps its leases, and reaches no other NATS
// node): the majority elects a new stream leader and the other poller publishes
// through it, while the minority leader can commit nothing. After the heal the
// cut-off poller's outbox drains through the cluster, nothing lost or doubled.
func TestPartitionStreamLeader(t *testing.T) {
	b, watch := partStart(t, 3, 3, 0, 2, partSpeed)
	js := jetStream(t, b.natsConn(t))
	var old string
	simtest.WaitFor(t, 60*time.Second, "the stream to have a leader", func() bool {
		old = streamLeader(t, js)
		return old != ""
	})
	leader := b.busiest(t)
	var majority []string
	for i := range 3 {
		if n := fmt.Sprintf("nats-%d", i+1); n != old {
			majority = append(majority, n)
			b.net.Cut(old, n)
			b.net.Cut(leader.instance, n)
		}
	}
	for _, p := range b.pollers {
		if p != leader {
			b.net.Cut(old, p.instance)
		}
	}
	// Asked through a majority node: the isolated one still answers that it
	// leads, to a client that reaches it.
	seen := jetStream(t, b.natsConnTo(t, majority[0]))
	simtest.WaitFor(t, 60*time.Second, "the majority to elect a new stream leader", func() bool {
		l := streamLeader(t, seen)
		return l != "" && l != old
	})
	time.Sleep(faultFor()) // the fault's length, not a wait for a condition
	b.net.HealAll()
	b.verdict(t, "stream leader isolated with a minority (R3)",
		fmt.Sprintf("%s and %s cut from %v for %s", old, leader.instance, majority, faultFor()), watch)
}

// streamLeader is the name of the NATS node leading the stream ("" when the
// answer does not come: a leaderless moment, or the test's connection being on
// the minority side).
func streamLeader(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "CALLCENTER")
	if err != nil {
		return ""
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		return ""
	}
	return info.Cluster.Leader
}
