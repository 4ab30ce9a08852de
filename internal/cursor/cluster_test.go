package cursor

import (
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// startCluster runs a one-node Redis Cluster owning every slot (redistest.StartCluster).
func startCluster(t *testing.T) *redis.ClusterClient { return redistest.StartCluster(t) }

// Every operation works on Redis Cluster: all keys of an account share a slot.
func TestCluster(t *testing.T) {
	c := startCluster(t)
	ctx := ctxT(t)
	// The node does enforce slots: keys without a common tag are refused.
	if err := c.Eval(ctx, "return 1", []string{"callbus:x:a", "callbus:y:b"}).Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("cross-slot script: %v, want CROSSSLOT", err)
	}
	s := mustStore(t, c, uniqueAccount(t))
	exercise(t, s)
	l := mustAcquire(t, s, "a", time.Minute)
	if err := s.Renew(ctx, l); err != nil {
		t.Fatal(err)
	}
	if h, _, _, err := s.Leader(ctx); err != nil || h != "a" {
		t.Fatalf("Leader = %q %v", h, err)
	}
	if _, err := s.GetSnapshots(ctx, "call", []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	for _, err := range s.AllSnapshots(ctx, "call") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Counts(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ReadOutbox(ctx, "", 10)
	if err != nil || len(recs) != 3 {
		t.Fatalf("ReadOutbox = %d %v", len(recs), err)
	}
	if _, err := s.WaitOutbox(ctx, recs[2].StreamID, 10, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := s.TrimOutbox(ctx, recs[2].StreamID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.MemoryUsage(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, l); err != nil {
		t.Fatal(err)
	}
}
