package cursor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// liveBuckets returns, per prune kind, the bucket numbers in the kind's bucket
// set and those of the bucket hashes that exist.
func liveBuckets(t *testing.T, e env) (indexed, existing map[string][]string) {
	t.Helper()
	ctx := ctxT(t)
	indexed, existing = map[string][]string{}, map[string][]string{}
	for _, kind := range e.store.pruneKinds {
		members, err := e.rdb.SMembers(ctx, e.store.k.buckets(kind)).Result()
		if err != nil {
			t.Fatal(err)
		}
		indexed[kind] = slices.Sorted(slices.Values(members))
		prefix := e.store.k.bucket(kind, "")
		var have []string
		for _, key := range accountKeys(t, e.rdb, e.store) {
			if b, ok := strings.CutPrefix(key, prefix); ok {
				have = append(have, b)
			}
		}
		existing[kind] = slices.Sorted(slices.Values(have))
	}
	return indexed, existing
}

// checkBucketSets fails unless every bucket set holds exactly the buckets that
// hold a snapshot: no dead member, no live bucket missing (AllSnapshots and
// SnapshotCount read a bucket only through its set).
func checkBucketSets(t *testing.T, what string, e env) {
	t.Helper()
	indexed, existing := liveBuckets(t, e)
	for kind := range indexed {
		if !slices.Equal(indexed[kind], existing[kind]) {
			t.Errorf("%s: sb:%s = %v, buckets holding %s snapshots %v", what, kind, indexed[kind], kind, existing[kind])
		}
	}
}

// A long run of calls that end and are pruned leaves Redis as it found it: the
// number of keys, of bucket set members and the memory of the account stay flat
// round after round once pruning keeps up, and no bucket set keeps a member for
// a bucket that pruning emptied (before the fix, about 62,000 per million calls).
func TestPrunedBucketsLeaveTheirSets(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	const (
		perRound = 320 // ten snapshot buckets of 32 ids each round
		rounds   = 40
		keep     = 3 // rounds of calls still younger than the horizon
	)
	start := time.UnixMilli(1_714_557_600_000)
	type sample struct{ keys, members, memory int64 }
	var samples []sample
	for r := range rounds {
		ended := start.Add(time.Duration(r) * time.Minute)
		var b Batch
		for i := range perRound {
			id := strconv.Itoa(r*perRound + i)
			b.Snapshots = append(b.Snapshots, Snapshot{Kind: "call", ID: id, Data: []byte(fmt.Sprintf("call-%08d", i))},
				Snapshot{Kind: "metric", ID: id, Data: []byte(fmt.Sprintf("metric-%08d", i))})
			b.Terminal = append(b.Terminal, Tracked{ID: id, At: ended})
		}
		mustCommit(t, e.store, l, b)
		horizon := ended.Add(-keep*time.Minute + time.Millisecond)
		for {
			n, err := e.store.Prune(ctx, l, horizon, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if n < 1000 {
				break
			}
		}
		checkBucketSets(t, fmt.Sprintf("round %d", r), e)
		var members int64
		for _, kind := range e.store.pruneKinds {
			members += e.rdb.SCard(ctx, e.store.k.buckets(kind)).Val()
		}
		mem, _, err := e.store.MemoryUsage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, sample{int64(len(accountKeys(t, e.rdb, e.store))), members, mem})
	}
	// From the round the horizon first pruned, every round adds what it prunes.
	steady := samples[keep+1]
	for r, s := range samples[keep+1:] {
		if s.keys > steady.keys || s.members > steady.members {
			t.Errorf("round %d: %d keys, %d bucket set members; round %d had %d and %d", r+keep+1, s.keys, s.members, keep+1, steady.keys, steady.members)
		}
		if s.memory > steady.memory*11/10 {
			t.Errorf("round %d: %d bytes, round %d %d: memory grows", r+keep+1, s.memory, keep+1, steady.memory)
		}
	}
	if want := int64(2 * keep * perRound / 32); steady.members != want {
		t.Errorf("%d bucket set members in the steady state, want %d (the live buckets)", steady.members, want)
	}
}

// A bucket leaves its set in the script that empties it, whichever empties it (a
// prune, a delete, a snapshot grown too long for a bucket), and a bucket written
// again, in the same batch or a later one, is in its set again.
func TestBucketSetFollowsContents(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	long := []byte(strings.Repeat("x", maxChunks*chunkSize+1))
	ended := time.UnixMilli(1_714_557_600_000)
	for _, step := range []struct {
		name  string
		batch Batch
		prune bool
		want  []string // sb:call afterwards
	}{
		{"written", Batch{Snapshots: []Snapshot{{Kind: "call", ID: "1", Data: []byte("a")}, {Kind: "call", ID: "40", Data: []byte("b")}}}, false, []string{"0", "1"}},
		{"deleted", Batch{Deletes: []Ref{{Kind: "call", ID: "40"}}}, false, []string{"0"}},
		{"grown out of its bucket", Batch{Snapshots: []Snapshot{{Kind: "call", ID: "1", Data: long}}}, false, nil},
		{"back, moved out and another in, in one batch", Batch{Snapshots: []Snapshot{
			{Kind: "call", ID: "1", Data: []byte("a")}, {Kind: "call", ID: "1", Data: long}, {Kind: "call", ID: "2", Data: []byte("c")}}}, false, []string{"0"}},
		{"deleted and written again in one batch", Batch{Deletes: []Ref{{Kind: "call", ID: "2"}},
			Snapshots: []Snapshot{{Kind: "call", ID: "3", Data: []byte("d")}}}, false, []string{"0"}},
		{"pruned", Batch{Snapshots: []Snapshot{{Kind: "call", ID: "100", Data: []byte("e")}},
			Deletes:  []Ref{{Kind: "call", ID: "1"}},
			Terminal: []Tracked{{ID: "3", At: ended}, {ID: "100", At: ended}}}, true, nil},
	} {
		mustCommit(t, e.store, l, step.batch)
		if step.prune {
			if _, err := e.store.Prune(ctx, l, ended.Add(time.Second), 100); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := e.rdb.SMembers(ctx, e.store.k.buckets("call")).Result()
		if slices.Sort(got); !slices.Equal(got, step.want) {
			t.Errorf("%s: sb:call = %v, want %v", step.name, got, step.want)
		}
		checkBucketSets(t, step.name, e)
	}
}

// Prunes emptying buckets while commits fill the same buckets again never leave
// a bucket that holds a snapshot out of its set, nor an empty one in it: the
// emptiness check and the removal are one script, which no commit interleaves.
func TestBucketSetsUnderConcurrentPruneAndCommit(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l := mustAcquire(t, e.store, "a", time.Minute)
	ended := time.UnixMilli(1_714_557_600_000)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	stop := make(chan struct{})
	wg.Add(2)
	go func() { // fills buckets 0..3 again and again, one id at a time
		defer wg.Done()
		defer close(stop)
		for i := range 2000 {
			id := strconv.Itoa(i % 128)
			b := Batch{Snapshots: []Snapshot{{Kind: "call", ID: id, Data: []byte("c")}, {Kind: "metric", ID: id, Data: []byte("m")}},
				Terminal: []Tracked{{ID: id, At: ended}}}
			if _, err := e.store.Commit(ctx, l, b); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // prunes whatever ended
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := e.store.Prune(ctx, l, ended.Add(time.Second), 7); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkBucketSets(t, "after the race", e)
	indexed, _ := liveBuckets(t, e)
	if n, err := e.store.SnapshotCount(ctx, "call"); err != nil || n == 0 && len(indexed["call"]) > 0 {
		t.Errorf("SnapshotCount = %d %v with sb:call %v", n, err, slices.Collect(maps.Keys(indexed)))
	}
}

// Bucket set members an earlier release left for buckets it emptied are taken
// out by later prunes, a few hundred a call, whether or not anything is due for
// pruning; live buckets stay.
func TestPruneSweepsDeadMembers(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	l := mustAcquire(t, e.store, "a", time.Minute)
	mustCommit(t, e.store, l, Batch{Snapshots: []Snapshot{{Kind: "call", ID: "5", Data: []byte("a")}, {Kind: "metric", ID: "5000", Data: []byte("b")}}})
	for _, kind := range e.store.pruneKinds {
		dead := make([]any, 0, 1000)
		for b := 1000; b < 2000; b++ {
			dead = append(dead, strconv.Itoa(b))
		}
		if err := e.rdb.SAdd(ctx, e.store.k.buckets(kind), dead...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for range 1000/sweepCount + 2 {
		if _, err := e.store.Prune(ctx, l, time.UnixMilli(1), 10); err != nil {
			t.Fatal(err)
		}
	}
	checkBucketSets(t, "after the sweeps", e)
	if indexed, _ := liveBuckets(t, e); !slices.Equal(indexed["call"], []string{"0"}) || !slices.Equal(indexed["metric"], []string{"156"}) {
		t.Errorf("bucket sets %v, want the live buckets call 0 and metric 156", indexed)
	}
}
