package redistest

import (
	"testing"
)

// The cluster serves keys of every shard, and a key survives both kinds of
// failover of its shard's master.
func TestClusterFailovers(t *testing.T) {
	c := StartShards(t, 3)
	rdb := c.Client(t)
	ctx := t.Context()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if err := rdb.Set(ctx, k, k, 0).Err(); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
	}
	shard := c.ShardOf(t, "a")
	before := c.Master(t, shard)
	c.Failover(t, shard)
	if c.Master(t, shard) == before {
		t.Fatal("CLUSTER FAILOVER left the master in place")
	}
	if v, err := rdb.Get(ctx, "a").Result(); err != nil || v != "a" {
		t.Fatalf("after failover: %q %v", v, err)
	}
	// The replica may not have the write yet when its master dies: either value.
	if err := rdb.Set(ctx, "a", "a2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.KillMaster(t, shard)
	if c.Master(t, shard) != before {
		t.Fatal("the killed master's replica did not take over")
	}
	if v, err := rdb.Get(ctx, "a").Result(); err != nil || (v != "a2" && v != "a") {
		t.Fatalf("after the master's death: %q %v", v, err)
	}
}

// A Sentinel client follows both kinds of failover.
func TestSentinelFailovers(t *testing.T) {
	s := StartSentinel(t, 3)
	rdb := s.Client(t)
	ctx := t.Context()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	first := s.Master(t)
	s.Failover(t)
	if s.Master(t) == first {
		t.Fatal("SENTINEL FAILOVER left the master in place")
	}
	waitUntil(t, "the client writes to the new master", func() bool { return rdb.Set(ctx, "k", "v2", 0).Err() == nil })
	s.KillMaster(t)
	if s.Master(t) != first {
		t.Fatal("the killed master's replica did not take over")
	}
	waitUntil(t, "the client reads from the new master", func() bool { return rdb.Get(ctx, "k").Err() == nil })
}
