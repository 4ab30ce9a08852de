package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of redis-server processes on loopback: shards, each
// a master and its replica, every slot served. The nodes of a shard swap roles on
// a failover; Master and Replica say who is which now.
type Cluster struct {
	Shards [][2]*Server // each shard's two nodes (master first at the start)
}

// nodeTimeout is cluster-node-timeout: how long a silent master stays a master.
// Short, so a killed master's replica takes over within seconds.
const nodeTimeout = 1000 * time.Millisecond

// clusterWait bounds waits for the cluster to form or heal (a loaded machine).
const clusterWait = 60 * time.Second

// StartShards runs a Redis Cluster of shards masters, each with one replica,
// that splits the slots evenly, and kills it when the test ends. It returns once
// every node reports cluster_state:ok and every replica is in sync.
func StartShards(t testing.TB, shards int) *Cluster {
	t.Helper()
	bin := Binary(t)
	c := &Cluster{}
	for range shards {
		c.Shards = append(c.Shards, [2]*Server{clusterNode(t, bin), clusterNode(t, bin)})
	}
	ctx := context.Background()
	first := c.Shards[0][0]
	per := 16384 / shards
	for i, sh := range c.Shards {
		lo, hi := i*per, (i+1)*per-1
		if i == shards-1 {
			hi = 16383
		}
		do(t, sh[0], "CLUSTER", "ADDSLOTSRANGE", lo, hi)
		for _, n := range sh {
			if n != first {
				do(t, first, "CLUSTER", "MEET", "127.0.0.1", n.port, n.busPort)
			}
		}
	}
	c.waitNodes(t, ctx)
	for _, sh := range c.Shards {
		id := nodeID(t, sh[0])
		// A replica may not know the master's id yet: retry until it does.
		waitUntil(t, "replica attached", func() bool { return sh[1].node().Do(ctx, "CLUSTER", "REPLICATE", id).Err() == nil })
	}
	c.WaitHealthy(t)
	return c
}

// clusterNode starts one cluster-enabled redis-server with its own bus port.
func clusterNode(t testing.TB, bin string) *Server {
	t.Helper()
	bus := freePort(t)
	s := &Server{dir: t.TempDir(), busPort: bus, extra: []string{"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", strconv.Itoa(int(nodeTimeout.Milliseconds())),
		"--cluster-port", strconv.Itoa(bus), "--cluster-replica-validity-factor", "0", "--repl-diskless-sync-delay", "0"}}
	s.start(t, bin, freePort(t))
	t.Cleanup(s.Stop)
	return s
}

// Addrs are the addresses of every node, for a cluster client's seed list.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, sh := range c.Shards {
		for _, n := range sh {
			out = append(out, n.Addr)
		}
	}
	return out
}

// Client returns a cluster client on every node's address, closed at the end of
// the test.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRedirects: 16})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// ShardOf returns the shard that serves key's slot.
func (c *Cluster) ShardOf(t testing.TB, key string) int {
	t.Helper()
	slot, err := c.Shards[0][0].node().ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("cluster keyslot: %v", err)
	}
	return min(int(slot)/(16384/len(c.Shards)), len(c.Shards)-1)
}

// Master and Replica return shard i's node in that role now (by ROLE).
func (c *Cluster) Master(t testing.TB, i int) *Server {
	t.Helper()
	for _, n := range c.Shards[i] {
		if n.running() && role(n) == "master" {
			return n
		}
	}
	t.Fatalf("shard %d has no master", i)
	return nil
}

// Replica returns shard i's replica (the node that is not its master).
func (c *Cluster) Replica(t testing.TB, i int) *Server {
	t.Helper()
	m := c.Master(t, i)
	if c.Shards[i][0] == m {
		return c.Shards[i][1]
	}
	return c.Shards[i][0]
}

// Failover makes shard i's replica its master with CLUSTER FAILOVER (the
// coordinated hand-over an operator runs: the replica catches up first, so no
// acknowledged write is lost), and waits until the cluster is healthy again.
func (c *Cluster) Failover(t testing.TB, i int) {
	t.Helper()
	r := c.Replica(t, i)
	do(t, r, "CLUSTER", "FAILOVER")
	waitUntil(t, "replica promoted", func() bool { return role(r) == "master" })
	c.WaitHealthy(t)
}

// KillMaster kills shard i's master (SIGKILL), waits until its replica was
// elected, then starts the old master again (it rejoins as the replica) and waits
// until the cluster is healthy. Writes the replica had not received when the
// master died are lost: Redis replicates asynchronously.
func (c *Cluster) KillMaster(t testing.TB, i int) {
	t.Helper()
	m, r := c.Master(t, i), c.Replica(t, i)
	m.Stop()
	waitUntil(t, "replica elected after its master died", func() bool { return role(r) == "master" })
	m.Restart(t)
	c.WaitHealthy(t)
}

// WaitHealthy waits until every node reports cluster_state:ok, each shard has one
// master and one replica whose link is up.
func (c *Cluster) WaitHealthy(t testing.TB) {
	t.Helper()
	waitUntil(t, "redis cluster healthy", func() bool {
		for _, sh := range c.Shards {
			masters := 0
			for _, n := range sh {
				info, err := n.node().ClusterInfo(context.Background()).Result()
				if err != nil || !strings.Contains(info, "cluster_state:ok") {
					return false
				}
				switch role(n) {
				case "master":
					masters++
				case "slave":
					if !linkUp(n) {
						return false
					}
				default:
					return false
				}
			}
			if masters != 1 {
				return false
			}
		}
		return true
	})
}

// waitNodes waits until every node knows all the others.
func (c *Cluster) waitNodes(t testing.TB, ctx context.Context) {
	t.Helper()
	want := 2 * len(c.Shards)
	waitUntil(t, "cluster nodes met", func() bool {
		for _, sh := range c.Shards {
			for _, n := range sh {
				nodes, err := n.node().ClusterNodes(ctx).Result()
				if err != nil || strings.Count(strings.TrimSpace(nodes), "\n")+1 != want || strings.Contains(nodes, "handshake") {
					return false
				}
			}
		}
		return true
	})
}

// node is a plain client of this one server, kept for the server's life.
func (s *Server) node() *redis.Client {
	if s.admin == nil {
		s.admin = redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	}
	return s.admin
}

// running reports whether the server process is up.
func (s *Server) running() bool { return s.cmd != nil && s.cmd.Process != nil }

// role is the server's ROLE ("master", "slave", "sentinel"), or "" when it does
// not answer.
func role(s *Server) string {
	if !s.running() {
		return ""
	}
	v, err := s.node().Do(context.Background(), "ROLE").Slice()
	if err != nil || len(v) == 0 {
		return ""
	}
	r, _ := v[0].(string)
	return r
}

func nodeID(t testing.TB, s *Server) string {
	t.Helper()
	id, err := s.node().Do(context.Background(), "CLUSTER", "MYID").Text()
	if err != nil {
		t.Fatalf("cluster myid: %v", err)
	}
	return id
}

// do runs a command on one server and fails the test on an error.
func do(t testing.TB, s *Server, args ...any) {
	t.Helper()
	if err := s.node().Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("%s on %s: %v", fmt.Sprint(args...), s.Addr, err)
	}
}

// waitUntil polls cond until it holds or clusterWait passes.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", clusterWait, what)
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
}

// linkUp reports whether a replica is in sync with its master.
func linkUp(s *Server) bool {
	repl, err := s.node().Info(context.Background(), "replication").Result()
	return err == nil && containsLine(repl, "master_link_status:up")
}

// containsLine reports whether text (an INFO reply) has the line want.
func containsLine(text, want string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}
