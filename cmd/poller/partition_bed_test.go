package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/netfault"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
)

// The partition tests run every process in a network namespace of its own
// (internal/testkit/netfault): each poller, redis-server and nats-server, on one
// bridge, so that links can be cut, made lossy, slow and flapping while the
// fleet runs. The simulator runs in the test process, in the host's namespace,
// served on the bridge's address: the audit reads its truth, and the test
// reads Redis (leases, outboxes) and the stream through the bridge, which no
// fault touches.

// partBed is a partition test's network and processes; its fleetBed (engines
// left nil) holds the accounts, stores and live pollers so that the fleet tests'
// lease watch, allLed, auditOnce and explain work on it.
type partBed struct {
	*fleetBed
	net        *netfault.Net
	natsURLs   []string // one per NATS node
	redisURL   string
	cluster    []string              // the Redis Cluster's node addresses (none: a single redis-server)
	redisNodes [][2]redisNode        // the Redis Cluster's shards
	rdb        redis.UniversalClient // the test's client, through the bridge
}

// natsBinary builds nats-server from the module version go.mod names, once per
// test binary: a server that runs inside a namespace must be a process.
var natsBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "callbus-nats-server-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "nats-server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build nats-server: %v\n%s", err, out)
	}
	return bin, nil
})

// newPartBed makes the network with Redis (a node "redis", or with redisShards
// > 0 a Redis Cluster of that many shards, master and replica each) and
// natsNodes NATS nodes (one: a single server; three: a cluster, the stream R3),
// starts them and n accounts of the simulator.
func newPartBed(t *testing.T, accounts, natsNodes, redisShards int) *partBed {
	t.Helper()
	if testing.Short() {
		t.Skip("partition tests in -short mode")
	}
	nf := netfault.New(t)
	b := &partBed{net: nf, fleetBed: &fleetBed{dir: t.TempDir(), stores: map[string]*cursor.Store{}, pollers: map[string]*fleetPoller{}}}
	if redisShards > 0 {
		b.startRedisCluster(t, redisShards)
	} else {
		b.startRedis(t)
	}
	b.startNATS(t, natsNodes)
	b.sim = simtest.NewAccounts(t, accounts, func(_ int, _ string, c *sim.Config) {
		c.Agents, c.Teams, c.CallRate, c.Plan = 6, 2, 3, 0
	})
	l, err := net.Listen("tcp", nf.HostAddr().String()+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: b.sim.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	base := "http://" + l.Addr().String()
	for _, name := range b.sim.Names() {
		writeAccount(t, b.dir, name, base+sim.AccountPrefix+name, simtest.AccountKey(name))
		s, err := cursor.New(b.rdb, name)
		if err != nil {
			t.Fatal(err)
		}
		b.stores[name] = s
	}
	return b
}

// process starts name with args in node; it is killed when the test ends
// (before the network goes: cleanups run last-in first-out).
func (b *partBed) process(t *testing.T, node *netfault.Node, name string, args ...string) *simtest.Buffer {
	t.Helper()
	cmd := node.Command(name, args...)
	out := &simtest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s in %s: %v", name, node.Name, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return out
}

// startRedis runs redis-server (no persistence: a partition is not a crash) in
// node "redis" and connects the test's client through the bridge.
func (b *partBed) startRedis(t *testing.T) {
	t.Helper()
	node := b.net.Add("redis")
	b.process(t, node, redistest.Binary(t), "--bind", node.Addr.String(), "--port", "6379",
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir", t.TempDir())
	b.redisURL = "redis://" + node.Addr.String() + ":6379/0"
	opts, err := redis.ParseURL(b.redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	simtest.WaitFor(t, 30*time.Second, "redis-server in its namespace to answer", func() bool {
		return rdb.Ping(t.Context()).Err() == nil
	})
	b.rdb = rdb
}

// startNATS runs n nats-server processes with JetStream, each in its own node
// (nats-1…), as a cluster when n > 1.
func (b *partBed) startNATS(t *testing.T, n int) {
	t.Helper()
	bin, err := natsBinary()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*netfault.Node
	var routes []string
	for i := range n {
		node := b.net.Add(fmt.Sprintf("nats-%d", i+1))
		nodes = append(nodes, node)
		routes = append(routes, "nats://"+node.Addr.String()+":6222")
	}
	for i, node := range nodes {
		args := []string{"-js", "-a", node.Addr.String(), "-p", "4222", "-m", "8222", "-sd", t.TempDir(), "-n", node.Name}
		if n > 1 {
			args = append(args, "--cluster_name", "callbus", "--cluster", routes[i], "--routes", strings.Join(routes, ","))
		}
		b.process(t, node, bin, args...)
		b.natsURLs = append(b.natsURLs, "nats://"+node.Addr.String()+":4222")
	}
	simtest.WaitFor(t, 60*time.Second, "the NATS servers in their namespaces to have JetStream", func() bool {
		nc, err := nats.Connect(strings.Join(b.natsURLs, ","), nats.Timeout(2*time.Second))
		if err != nil {
			return false
		}
		defer nc.Close()
		js, err := nc.JetStream()
		if err != nil {
			return false
		}
		_, err = js.AccountInfo(nats.MaxWait(2 * time.Second))
		return err == nil
	})
}

// natsConn is the test's connection to the NATS servers, through the bridge.
func (b *partBed) natsConn(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(strings.Join(b.natsURLs, ","), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// natsConnTo is the test's connection to NATS node name alone.
func (b *partBed) natsConnTo(t testing.TB, name string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("nats://"+b.net.Node(name).Addr.String()+":4222", nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// env is a poller's environment: the fleet's settings with the bed's engines.
func (b *partBed) env(instance string) []string {
	env := fleetEnv(strings.Join(b.natsURLs, ","), b.redisURL, instance, "0.0.0.0:8081", b.dir)
	env = without(env, "CALLBUS_*_INTERVAL_SECONDS")
	if len(b.cluster) > 0 {
		env = append(env, "CALLBUS_REDIS_CLUSTER_ADDRS="+strings.Join(b.cluster, ","))
	}
	return append(env,
		"CALLBUS_CALLS_INTERVAL_SECONDS=2", "CALLBUS_OPEN_CALLS_INTERVAL_SECONDS=2",
		"CALLBUS_METRICS_INTERVAL_SECONDS=2", "CALLBUS_USERS_INTERVAL_SECONDS=2",
		"CALLBUS_TEAMS_INTERVAL_SECONDS=5", "CALLBUS_USER_STATUSES_INTERVAL_SECONDS=30",
		fmt.Sprintf("CALLBUS_STREAM_REPLICAS=%d", len(b.natsURLs)))
}

// startPoller runs a poller named instance in a node of the same name.
func (b *partBed) startPoller(t *testing.T, instance string, extra ...string) *fleetPoller {
	t.Helper()
	node := b.net.Add(instance)
	c := &child{cmd: node.Command(pollerBinary(t), "run"), stderr: &simtest.Buffer{}, exited: make(chan error, 1)}
	c.cmd.Env = append(b.env(instance), extra...)
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() { c.kill(t) })
	p := &fleetPoller{child: c, instance: instance, addr: node.Addr.String() + ":8081"}
	b.pollers[instance] = p
	b.all = append(b.all, p)
	t.Cleanup(func() {
		for _, name := range b.sim.Names() {
			if strings.Contains(c.stderr.String(), simtest.AccountKey(name)) {
				t.Errorf("%s's API key appears in %s's output", name, instance)
				return
			}
		}
	})
	return p
}

// grows waits until the pollers published past the stream's size at the call.
func (b *partBed) grows(t *testing.T, what string) {
	t.Helper()
	streamGrows(t, jetStream(t, b.natsConn(t)), what)
}

// outboxes is the number of events waiting in every account's outbox.
func (b *partBed) outboxes(t *testing.T) int64 {
	var sum int64
	for _, s := range b.stores {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		n, err := s.OutboxLen(ctx)
		cancel()
		if err == nil {
			sum += n
		}
	}
	return sum
}
