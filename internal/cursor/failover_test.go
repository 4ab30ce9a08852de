package cursor

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// The store, unchanged, keeps its commits, lease and fence across a Redis
// Cluster CLUSTER FAILOVER of the account's shard, and works again after its
// master is killed.
func TestStoreAcrossClusterFailovers(t *testing.T) {
	c := redistest.StartShards(t, 3)
	rdb := c.Client(t)
	s := mustStore(t, rdb, uniqueAccount(t))
	shard := c.ShardOf(t, s.KeyPrefix()+"lease")
	acrossFailovers(t, rdb, s, func() { c.Failover(t, shard) }, func() { c.KillMaster(t, shard) })
}

// The same across a Sentinel failover (SENTINEL FAILOVER) and a master kill.
func TestStoreAcrossSentinelFailovers(t *testing.T) {
	sn := redistest.StartSentinel(t, 3)
	rdb := sn.Client(t)
	s := mustStore(t, rdb, uniqueAccount(t))
	acrossFailovers(t, rdb, s, func() { sn.Failover(t) }, func() { sn.KillMaster(t) })
}

// acrossFailovers commits, runs the coordinated failover, checks nothing was
// lost and the lease and fence hold; then kills the master and checks the store
// serves a leader again.
func acrossFailovers(t *testing.T, rdb redis.UniversalClient, s *Store, failover, killMaster func()) {
	t.Helper()
	l := mustAcquire(t, s, "a", time.Minute)
	mustCommit(t, s, l, eventsBatch("one", 5))
	failover()
	// The client follows the new master; the first command may meet the switch.
	var err error
	retry(t, "renew after the failover", func() bool { err = s.Renew(ctxT(t), l); return !isRedisDown(err) })
	if err != nil {
		t.Fatalf("renew after failover: %v", err)
	}
	mustCommit(t, s, l, eventsBatch("two", 5))
	if n, err := s.OutboxLen(ctxT(t)); err != nil || n != 10 {
		t.Fatalf("outbox after failover: %d %v, want 10", n, err)
	}
	if _, err := s.Acquire(ctxT(t), "b", time.Minute); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("a second holder after failover: %v, want ErrNotLeader", err)
	}
	if err := s.Release(ctxT(t), l); err != nil {
		t.Fatal(err)
	}
	b := mustAcquire(t, s, "b", time.Minute)
	if _, err := s.Commit(ctxT(t), l, eventsBatch("stale", 1)); !errors.Is(err, ErrStaleLeader) {
		t.Fatalf("the old leader's commit: %v, want ErrStaleLeader", err)
	}
	killMaster()
	// Writes the replica had not received are lost with the master (Redis
	// replicates asynchronously): a leader may have to take the lease again.
	retry(t, "a leader commits after the master's death", func() bool {
		lb, err := s.Acquire(ctxT(t), "b", time.Minute)
		if err == nil {
			b = lb
			_, err = s.Commit(ctxT(t), b, eventsBatch("three", 1))
		}
		return err == nil
	})
}

// eventsBatch is n events named prefix-i.
func eventsBatch(prefix string, n int) Batch {
	var b Batch
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		b.Events = append(b.Events, event.Message{ID: id, Subject: "callcenter.x.call.created", Data: []byte(`{}`)})
	}
	return b
}

// isRedisDown reports an error that is not the store's answer but Redis away.
func isRedisDown(err error) bool {
	return err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrStaleLeader)
}

// retry polls cond for up to a minute (a failover on a loaded machine).
func retry(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}
