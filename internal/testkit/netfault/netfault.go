// Package netfault puts each process of a test in a network namespace of its own
// on one bridge, so that the test can cut, degrade and flap the links between them
// the way real networks fail: a cut drops packets silently (a TCP connection that
// neither works nor closes until a timeout), one way or both, rather than refusing
// them at once as a dead process on loopback does.
//
// A Net is made by New: a bridge in the host's namespace holding the address
// 10.246.R.1/24 (R is the run's own /24 of 10.246.0.0/16), and per Add one
// namespace with a veth pair to the bridge and the address 10.246.R.N. The test
// process stays in the host's namespace and reaches every node through the bridge
// (to read Redis and the stream); nothing is routed anywhere else (the namespaces
// have no default route). Faults are iptables rules inside the namespaces, so
// the host's tables are never touched.
//
// Names start with Prefix and the owning process's pid: a run removes what it
// made at the end of its test (t.Cleanup, also when the test fails), and Sweep
// removes what runs that crashed left (their pid is gone), never what a live
// run uses.
package netfault

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/callbus/callbus/internal/testkit/skipreport"
)

// Prefix starts the name of every namespace and link this package makes.
const Prefix = "cbnf"

// netnsDir is where `ip netns` keeps its namespaces (nsenter --net= takes them).
const netnsDir = "/var/run/netns"

// Net is one test's bridge and its nodes.
type Net struct {
	t      testing.TB
	run    string // Prefix + the owning pid in hex: every name of this run starts with it
	subnet byte   // R of 10.246.R.0/24
	bridge string

	mu     sync.Mutex
	nodes  map[string]*Node
	order  []*Node
	flaps  []*Flap
	delays []*delayer
}

// Node is one namespace on the bridge.
type Node struct {
	Name  string     // the test's name for it ("redis", "poller-1")
	NS    string     // the namespace's name (under /var/run/netns)
	Addr  netip.Addr // its address on the bridge
	index int
}

// Missing says what this machine lacks for a Net ("" when nothing): root, ip
// (iproute2), iptables and nsenter.
func Missing() string {
	if os.Geteuid() != 0 {
		return "network namespaces need root"
	}
	for _, tool := range []string{"ip", "iptables", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not found (apt-get install -y iproute2 iptables util-linux)"
		}
	}
	return ""
}

// New makes the run's bridge after sweeping leftovers of crashed runs, and
// removes everything it and Add make when the test ends. It skips the test
// (skipreport) where Missing says something is missing.
func New(t testing.TB) *Net {
	t.Helper()
	if m := Missing(); m != "" {
		skipreport.Skip(t, "netfault: "+m)
	}
	if err := Sweep(); err != nil {
		t.Logf("netfault: sweeping leftovers: %v", err)
	}
	n := &Net{t: t, run: fmt.Sprintf("%s%x", Prefix, os.Getpid()), nodes: map[string]*Node{}}
	n.bridge = n.run + "-br"
	// Two runs starting at once must not pick the same /24: the choice and the
	// address that claims it happen under a lock shared by every run.
	unlock, err := lockFile(filepath.Join(os.TempDir(), Prefix+".lock"))
	if err != nil {
		t.Fatalf("netfault: %v", err)
	}
	defer unlock()
	subnet, err := freeSubnet()
	if err != nil {
		t.Fatalf("netfault: %v", err)
	}
	n.subnet = subnet
	t.Cleanup(n.Close)
	if err := ipCmd("link", "add", n.bridge, "type", "bridge"); err != nil {
		t.Fatalf("netfault: the bridge: %v", err)
	}
	for _, args := range [][]string{
		{"addr", "add", n.HostAddr().String() + "/24", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	} {
		if err := ipCmd(args...); err != nil {
			t.Fatalf("netfault: the bridge: %v", err)
		}
	}
	return n
}

// HostAddr is the test process's address on the bridge: where nodes reach
// servers the test runs itself (the simulator).
func (n *Net) HostAddr() netip.Addr { return netip.AddrFrom4([4]byte{10, 246, n.subnet, 1}) }

// Add makes a node: a namespace with loopback up and a veth pair to the bridge.
func (n *Net) Add(name string) *Node {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, dup := n.nodes[name]; dup {
		n.t.Fatalf("netfault: node %s added twice", name)
	}
	i := len(n.order) + 2 // .1 is the bridge
	if i > 250 {
		n.t.Fatalf("netfault: more than 249 nodes")
	}
	node := &Node{Name: name, NS: fmt.Sprintf("%s-%d", n.run, i), Addr: netip.AddrFrom4([4]byte{10, 246, n.subnet, byte(i)}), index: i}
	n.nodes[name], n.order = node, append(n.order, node)
	host, peer := fmt.Sprintf("%s-h%d", n.run, i), fmt.Sprintf("%s-p%d", n.run, i)
	steps := [][]string{
		{"netns", "add", node.NS},
		{"-n", node.NS, "link", "set", "lo", "up"},
		{"link", "add", host, "type", "veth", "peer", "name", peer, "netns", node.NS},
		{"link", "set", host, "master", n.bridge},
		{"link", "set", host, "up"},
		{"-n", node.NS, "addr", "add", node.Addr.String() + "/24", "dev", peer},
		{"-n", node.NS, "link", "set", peer, "up"},
	}
	for _, args := range steps {
		if err := ipCmd(args...); err != nil {
			n.t.Fatalf("netfault: node %s: %v", name, err)
		}
	}
	return node
}

// Node is the node named name (the test fails when there is none).
func (n *Net) Node(name string) *Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	node := n.nodes[name]
	if node == nil {
		n.t.Fatalf("netfault: no node %s", name)
	}
	return node
}

// Command is a command that runs name with args inside node's namespace
// (nsenter --net, which keeps the host's /sys and mounts, unlike ip netns exec).
// nsenter execs name, so the process's pid is the command's.
func (node *Node) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=" + filepath.Join(netnsDir, node.NS), name}, args...)...)
}

// Close stops every flap, then removes the run's namespaces (their veth ends and
// rules go with them) and the bridge. New registers it with t.Cleanup; calling
// it again does nothing.
func (n *Net) Close() {
	n.mu.Lock()
	flaps := n.flaps
	n.flaps = nil
	n.mu.Unlock()
	for _, f := range flaps {
		f.Stop()
	}
	n.stopDelays()
	if err := removeRun(n.run); err != nil {
		n.t.Errorf("netfault: teardown: %v", err)
	}
}

// Sweep removes the namespaces and links of runs whose process is gone (a test
// binary killed before its cleanups ran).
func Sweep() error {
	runs := map[string]bool{}
	for _, name := range ownNames() {
		if run, ok := runOf(name); ok {
			runs[run] = true
		}
	}
	var errs []error
	for run := range runs {
		pid, err := strconv.ParseInt(strings.TrimPrefix(run, Prefix), 16, 32)
		if err != nil || processAlive(int(pid)) {
			continue
		}
		errs = append(errs, removeRun(run))
	}
	return errors.Join(errs...)
}

// removeRun deletes every namespace and link named for run.
func removeRun(run string) error {
	var errs []error
	for _, name := range ownNames() {
		if r, ok := runOf(name); !ok || r != run {
			continue
		}
		if _, err := os.Stat(filepath.Join(netnsDir, name)); err == nil {
			errs = append(errs, ipCmd("netns", "del", name))
		} else if err := ipCmd("link", "del", name); err != nil && linkExists(name) {
			// A veth end goes on its own, a moment after its peer's namespace:
			// only a link still there is a failure.
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
