package redistest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartCluster runs a one-node Redis Cluster owning every slot, killed when the
// test ends, and returns a cluster client for it. One node is enough to prove a
// key layout: Cluster refuses multi-key commands and scripts whose keys hash to
// different slots (CROSSSLOT) even on a single node.
func StartCluster(t testing.TB) *redis.ClusterClient {
	t.Helper()
	bin := Binary(t)
	s := &Server{dir: t.TempDir(), extra: []string{"--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf")}}
	s.start(t, bin, freePort(t))
	t.Cleanup(s.Stop)

	node := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer node.Close()
	ctx := context.Background()
	if err := node.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatalf("cluster addslotsrange: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := node.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis cluster on %s: state not ok after 10s: %v", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr}})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
