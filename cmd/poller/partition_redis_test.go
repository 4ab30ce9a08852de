package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/netfault"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
)

// redisNode is one node of the partition bed's Redis Cluster.
type redisNode struct {
	node   *netfault.Node
	client *redis.Client // the test's own connection to it, through the bridge
}

// startRedisCluster runs a Redis Cluster of shards masters, each with a replica
// (nodes redis-1a, redis-1b, …), every node in its own namespace, with a
// one-second cluster-node-timeout and replicas always eligible for failover
// (as redistest.StartShards on loopback), and waits until it is healthy.
func (b *partBed) startRedisCluster(t *testing.T, shards int) {
	t.Helper()
	bin := redistest.Binary(t)
	var nodes [][2]redisNode
	for i := range shards {
		var pair [2]redisNode
		for j, side := range []string{"a", "b"} {
			node := b.net.Add(fmt.Sprintf("redis-%d%s", i+1, side))
			b.process(t, node, bin, "--bind", node.Addr.String(), "--port", "6379", "--protected-mode", "no",
				"--save", "", "--appendonly", "no", "--dir", t.TempDir(),
				"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000",
				"--cluster-replica-validity-factor", "0", "--repl-diskless-sync-delay", "0")
			c := redis.NewClient(&redis.Options{Addr: node.Addr.String() + ":6379"})
			t.Cleanup(func() { _ = c.Close() })
			pair[j] = redisNode{node, c}
			b.cluster = append(b.cluster, node.Addr.String()+":6379")
		}
		nodes = append(nodes, pair)
	}
	ctx := t.Context()
	first := nodes[0][0]
	for _, pair := range nodes {
		for _, n := range pair {
			simtest.WaitFor(t, 30*time.Second, n.node.Name+" to answer", func() bool { return n.client.Ping(ctx).Err() == nil })
		}
	}
	per := 16384 / shards
	for i, pair := range nodes {
		lo, hi := i*per, (i+1)*per-1
		if i == shards-1 {
			hi = 16383
		}
		if err := pair[0].client.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatal(err)
		}
		for _, n := range pair {
			if n != first {
				if err := first.client.Do(ctx, "CLUSTER", "MEET", n.node.Addr.String(), 6379).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, pair := range nodes {
		id, err := pair[0].client.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatal(err)
		}
		simtest.WaitFor(t, 60*time.Second, pair[1].node.Name+" to replicate "+pair[0].node.Name, func() bool {
			return pair[1].client.Do(ctx, "CLUSTER", "REPLICATE", id).Err() == nil
		})
	}
	b.redisNodes = nodes
	b.redisURL = "redis://" + b.cluster[0] + "/0" // the host is unused: the cluster's addresses are
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: b.cluster})
	t.Cleanup(func() { _ = rdb.Close() })
	b.rdb = rdb
	b.clusterHealthy(t)
}

// clusterHealthy waits until every node says cluster_state:ok and every shard
// has one master and a replica whose link to it is up.
func (b *partBed) clusterHealthy(t *testing.T) {
	t.Helper()
	simtest.WaitFor(t, 90*time.Second, "the Redis Cluster to be healthy", func() bool {
		for _, pair := range b.redisNodes {
			masters := 0
			for _, n := range pair {
				info, err := n.client.ClusterInfo(t.Context()).Result()
				if err != nil || !strings.Contains(info, "cluster_state:ok") {
					return false
				}
				repl, err := n.client.Info(t.Context(), "replication").Result()
				if err != nil {
					return false
				}
				if strings.Contains(repl, "role:master") {
					masters++
				} else if !strings.Contains(repl, "master_link_status:up") {
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

// role is a cluster node's replication role ("master", "slave", "" when it
// does not answer).
func (n redisNode) role(ctx context.Context) string {
	v, err := n.client.Do(ctx, "ROLE").Slice()
	if err != nil || len(v) == 0 {
		return ""
	}
	s, _ := v[0].(string)
	return s
}

// TestPartitionRedisPrimary: a Redis Cluster of three shards. The master of
// the shard holding acct001 is cut from its replica, from the other shards and
// from every poller but the one leading acct001, which in turn loses the
// replica. The majority promotes the replica; the cut-off master accepts writes
// for up to cluster-node-timeout, then refuses them, and on the heal it rejoins
// as a replica and its writes are discarded. The audit must find no id reused
// and nothing lost: the poller reconciles the outbox it lost with the stream.
func TestPartitionRedisPrimary(t *testing.T) {
	b, watch := partStart(t, 6, 1, 3, 3, partSpeed)
	slot, err := b.rdb.(*redis.ClusterClient).ClusterKeySlot(t.Context(), "{acct001}").Result()
	if err != nil {
		t.Fatal(err)
	}
	shard := min(int(slot)/(16384/len(b.redisNodes)), len(b.redisNodes)-1)
	var master, replica redisNode
	for _, n := range b.redisNodes[shard] {
		if n.role(t.Context()) == "master" {
			master = n
		} else {
			replica = n
		}
	}
	if master.client == nil || replica.client == nil {
		t.Fatalf("shard %d has no master and replica", shard)
	}
	// Right after the start the fleet may still be moving accounts between its
	// members: acct001's lease can be between two of them for a moment.
	var leader *fleetPoller
	simtest.WaitFor(t, 60*time.Second, "acct001 to have a live leader", func() bool {
		leader = b.pollers[instanceOf(b.holders(t)["acct001"].holder)]
		return leader != nil
	})
	for _, n := range b.net.Nodes() {
		switch {
		case n.Name == master.node.Name || n.Name == leader.instance || strings.HasPrefix(n.Name, "nats-"):
		case strings.HasPrefix(n.Name, "redis-") || strings.HasPrefix(n.Name, "poller-"):
			b.net.Cut(master.node.Name, n.Name)
		}
	}
	b.net.Cut(leader.instance, replica.node.Name)
	simtest.WaitFor(t, 60*time.Second, "the majority to promote "+replica.node.Name, func() bool {
		return replica.role(t.Context()) == "master"
	})
	time.Sleep(faultFor()) // the fault's length, not a wait for a condition
	b.net.HealAll()
	b.clusterHealthy(t)
	b.verdict(t, "Redis Cluster primary cut from its replica and some pollers",
		fmt.Sprintf("%s cut from its replica, the other shards and all pollers but %s (cut from the replica) for %s", master.node.Name, leader.instance, faultFor()), watch)
}
