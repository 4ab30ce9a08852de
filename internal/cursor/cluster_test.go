package cursor

import (
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/redistest"
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
	// Calls with numeric ids: buckets, chunks, the terminal buckets, the rollback
	// guard, prune.
	res := mustCommit(t, s, l, Batch{
		Snapshots: []Snapshot{{Kind: "call", ID: "100", Data: make([]byte, 150)}, {Kind: "metric", ID: "100", Data: []byte("m")}},
		Terminal:  []Tracked{{ID: "100", At: time.UnixMilli(5)}},
		Events:    []event.Message{{ID: "e-100", Subject: "s", Data: []byte("{}")}},
	})
	mustCommit(t, s, l, Batch{OutboxSeen: res.StreamIDs[0], Cursors: map[string]string{"c": "1"}})
	if got, err := s.GetSnapshots(ctx, "call", []string{"a", "b", "100"}); err != nil || len(got["100"]) != 150 {
		t.Fatalf("GetSnapshots = %d bytes for 100, %v", len(got["100"]), err)
	}
	// 100's end is kept in whole seconds, rounded up (terminalEnd): 1 s.
	if n, err := s.Prune(ctx, l, time.UnixMilli(1001), 10); err != nil || n != 2 { // 100, and exercise's c
		t.Fatalf("Prune = %d %v, want 2", n, err)
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
	if err != nil || len(recs) != 4 {
		t.Fatalf("ReadOutbox = %d %v", len(recs), err)
	}
	if _, err := s.WaitOutbox(ctx, recs[3].StreamID, 10, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := s.TrimOutbox(ctx, recs[3].StreamID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.MemoryUsage(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, l); err != nil {
		t.Fatal(err)
	}
}
