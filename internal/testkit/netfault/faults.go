package netfault

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// A fault is a set of iptables rules in the OUTPUT chain of the sending node's
// namespace: a packet from a node to a peer is dropped (or queued) on its way
// out, so a cut looks like a silent network, never like a refused connection.
// Rules match the peer's address only, so the test process (the bridge's
// address) always reaches every node.

// rule is one OUTPUT rule of a namespace, as given to iptables after -A/-D.
type rule []string

// add appends r to ns's OUTPUT chain.
func (n *Net) add(ns string, r rule) {
	n.t.Helper()
	if err := iptables(ns, append([]string{"-A", "OUTPUT"}, r...)...); err != nil {
		n.t.Fatalf("netfault: %v", err)
	}
}

// del removes one r from ns's OUTPUT chain; a rule already gone is fine (a heal
// of everything ran first).
func (n *Net) del(ns string, r rule) {
	_ = iptables(ns, append([]string{"-D", "OUTPUT"}, r...)...)
}

func dropTo(to *Node) rule { return rule{"-d", to.Addr.String(), "-j", "DROP"} }

// CutOneWay drops every packet from a to b (b's packets still reach a: the
// asymmetric partition where a's requests are lost, or, cut from the server's
// side, where the server executes them and its replies are lost).
func (n *Net) CutOneWay(from, to string) {
	n.t.Helper()
	a, b := n.Node(from), n.Node(to)
	n.add(a.NS, dropTo(b))
	n.t.Logf("netfault: cut %s → %s", from, to)
}

// Cut drops every packet between a and b, both ways.
func (n *Net) Cut(a, b string) {
	n.t.Helper()
	n.CutOneWay(a, b)
	n.CutOneWay(b, a)
}

// Isolate cuts node from every other node (the host still reaches it).
func (n *Net) Isolate(name string) {
	n.t.Helper()
	for _, other := range n.Nodes() {
		if other.Name != name {
			n.Cut(name, other.Name)
		}
	}
}

// Split cuts every node of side from every node not in it: a partition of the
// nodes into side and the rest.
func (n *Net) Split(side ...string) {
	n.t.Helper()
	in := map[string]bool{}
	for _, s := range side {
		in[s] = true
	}
	for _, a := range side {
		for _, b := range n.Nodes() {
			if !in[b.Name] {
				n.Cut(a, b.Name)
			}
		}
	}
}

// HealPair removes the cuts between a and b, both ways (other faults stay).
func (n *Net) HealPair(a, b string) {
	na, nb := n.Node(a), n.Node(b)
	n.del(na.NS, dropTo(nb))
	n.del(nb.NS, dropTo(na))
}

// Loss drops each packet from every node to every other node with probability
// p (0..1), both ways: a lossy network on every link.
func (n *Net) Loss(p float64) {
	n.t.Helper()
	prob := strconv.FormatFloat(p, 'f', 4, 64)
	for _, a := range n.Nodes() {
		for _, b := range n.Nodes() {
			if a != b {
				n.add(a.NS, rule{"-d", b.Addr.String(), "-m", "statistic", "--mode", "random", "--probability", prob, "-j", "DROP"})
			}
		}
	}
	n.t.Logf("netfault: %.1f%% loss on every link", p*100)
}

// HealAll removes every fault: the flaps stop, every node's OUTPUT chain is
// flushed and the delay queues release what they hold.
func (n *Net) HealAll() {
	n.t.Helper()
	n.mu.Lock()
	flaps := n.flaps
	n.flaps = nil
	n.mu.Unlock()
	for _, f := range flaps {
		f.Stop()
	}
	for _, node := range n.Nodes() {
		if err := iptables(node.NS, "-F", "OUTPUT"); err != nil {
			n.t.Errorf("netfault: heal: %v", err)
		}
	}
	n.stopDelays()
	n.t.Logf("netfault: healed every link")
}

// Nodes are the nodes in the order they were added.
func (n *Net) Nodes() []*Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*Node(nil), n.order...)
}

// Flap is a link going down and up on a schedule until stopped.
type Flap struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once

	mu    sync.Mutex
	downs int
}

// Flap cuts a and b both ways and heals them again, each state lasting a random
// time between min and max, until the flap is stopped (HealAll, Close or Stop).
// seed makes the schedule repeatable.
func (n *Net) Flap(a, b string, minDur, maxDur time.Duration, seed uint64) *Flap {
	n.t.Helper()
	f := &Flap{stop: make(chan struct{}), done: make(chan struct{})}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func() time.Duration { return minDur + time.Duration(rng.Int64N(int64(maxDur-minDur)+1)) }
	na, nb := n.Node(a), n.Node(b)
	go func() {
		defer close(f.done)
		defer n.HealPair(a, b)
		for {
			// iptables errors here are the test's teardown racing the flap:
			// the namespaces are going away.
			if iptables(na.NS, append([]string{"-A", "OUTPUT"}, dropTo(nb)...)...) != nil ||
				iptables(nb.NS, append([]string{"-A", "OUTPUT"}, dropTo(na)...)...) != nil {
				return
			}
			f.mu.Lock()
			f.downs++
			f.mu.Unlock()
			if !f.wait(pick()) {
				return
			}
			n.HealPair(a, b)
			if !f.wait(pick()) {
				return
			}
		}
	}()
	n.mu.Lock()
	n.flaps = append(n.flaps, f)
	n.mu.Unlock()
	n.t.Logf("netfault: %s ↔ %s flapping every %s-%s", a, b, minDur, maxDur)
	return f
}

// wait sleeps d, or returns false at once when the flap is stopped.
func (f *Flap) wait(d time.Duration) bool {
	select {
	case <-f.stop:
		return false
	case <-time.After(d):
		return true
	}
}

// Stop ends the flap with the link up and returns once it is.
func (f *Flap) Stop() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

// Downs is how many times the link went down.
func (f *Flap) Downs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.downs
}

// String describes a node for logs.
func (node *Node) String() string { return fmt.Sprintf("%s (%s, %s)", node.Name, node.NS, node.Addr) }
