package cursor

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
)

// BenchmarkCommit commits batches of 100 events and 100 call snapshots, each
// with the rollback guard (OutboxSeen) as the poller sets it, the outbox being
// trimmed (outside the timer) as a relay would.
func BenchmarkCommit(b *testing.B) {
	e := newEnv(b)
	l := mustAcquire(b, e.store, "bench", time.Hour)
	rng := rand.New(rand.NewPCG(1, 2))
	snap := make([]byte, 160)
	body := make([]byte, 600)
	for i := range snap {
		snap[i] = byte(rng.IntN(256))
	}
	for i := range body {
		body[i] = 'a' + byte(rng.IntN(26))
	}
	batch := func(n int) Batch {
		var bt Batch
		for i := range 100 {
			id := strconv.Itoa(n*100 + i)
			bt.Snapshots = append(bt.Snapshots, Snapshot{Kind: "call", ID: id, Data: snap})
			bt.Events = append(bt.Events, event.Message{
				ID: "ev-" + id, Subject: "callcenter.bench.participant.status_changed", Data: body,
				Headers: map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
			})
		}
		bt.Cursors = map[string]string{"calls.high_water": time.Unix(int64(n), 0).UTC().Format(time.RFC3339)}
		return bt
	}
	ctx := b.Context()
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	n, seen := 0, ""
	for b.Loop() {
		bt := batch(n)
		bt.OutboxSeen = seen
		res, err := e.store.Commit(ctx, l, bt)
		if err != nil {
			b.Fatal(err)
		}
		n, seen = n+1, res.StreamIDs[len(res.StreamIDs)-1]
		if n%50 == 0 {
			b.StopTimer()
			if err := e.store.TrimOutbox(ctx, res.StreamIDs[len(res.StreamIDs)-1]); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n*100), "µs/event")
}

// BenchmarkGetSnapshots reads 1,000 call snapshots of 174 bytes (three chunks,
// the size of the simulator's backlog calls) as the poller does: "full" with
// consecutive ids, every bucket read whole (HGETALL), "sparse" with two ids per
// bucket (HMGET of their chunks).
func BenchmarkGetSnapshots(b *testing.B) {
	for _, c := range []struct {
		name string
		step int
	}{{"full", 1}, {"sparse", 16}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b)
			l := mustAcquire(b, e.store, "bench", time.Hour)
			rng := rand.New(rand.NewPCG(5, 6))
			ids := make([]string, 1000)
			var bt Batch
			for i := range ids {
				ids[i] = strconv.Itoa(1_000_000 + i*c.step)
				data := make([]byte, 174)
				for j := range data {
					data[j] = byte(rng.IntN(256))
				}
				bt.Snapshots = append(bt.Snapshots, Snapshot{Kind: "call", ID: ids[i], Data: data})
			}
			mustCommit(b, e.store, l, bt)
			ctx := b.Context()
			b.ReportAllocs()
			defer cpumeter.PerOp(b)()
			for b.Loop() {
				got, err := e.store.GetSnapshots(ctx, "call", ids)
				if err != nil || len(got) != len(ids) {
					b.Fatalf("GetSnapshots = %d snapshots, %v", len(got), err)
				}
			}
		})
	}
}

// BenchmarkTrackedCallMemory reports the Redis bytes per tracked call (MEMORY
// USAGE over every key of the account) for 10,000 calls with consecutive ids,
// each with a call and a metric snapshot and its index entry, with an empty
// outbox: "ended" as at the end of the backlog benchmark (every call terminal),
// "open" with every call open. Snapshot sizes are those of the simulator's
// backlog calls in the binary form of internal/diff: calls 174 bytes, metrics 46
// but one in nine with tags at 80 (too long for a listpack value); json1x are the
// sizes of the JSON snapshots of earlier releases (870 and 326).
func BenchmarkTrackedCallMemory(b *testing.B) {
	for _, c := range []struct {
		name              string
		call, metric, big int
		open              bool
	}{
		{"ended", 174, 46, 80, false},
		{"open", 174, 46, 80, true},
		{"ended_json1x", 870, 326, 326, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b)
			l := mustAcquire(b, e.store, "bench", time.Hour)
			const calls = 10_000
			rng := rand.New(rand.NewPCG(3, 4))
			blob := func(n int) []byte {
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(rng.IntN(256))
				}
				return p
			}
			at := time.UnixMilli(1_714_557_600_000)
			for start := 0; start < calls; start += 500 {
				var bt Batch
				for i := start; i < start+500; i++ {
					id := strconv.Itoa(1_000_000 + i)
					metric := c.metric
					if i%9 == 0 {
						metric = c.big
					}
					bt.Snapshots = append(bt.Snapshots,
						Snapshot{Kind: "call", ID: id, Data: blob(c.call)},
						Snapshot{Kind: "metric", ID: id, Data: blob(metric)})
					tr := Tracked{ID: id, At: at.Add(time.Duration(i) * time.Second)}
					if c.open {
						bt.Open = append(bt.Open, tr)
					} else {
						bt.Terminal = append(bt.Terminal, tr)
					}
				}
				mustCommit(b, e.store, l, bt)
			}
			var total int64
			var per map[string]int64
			for b.Loop() {
				var err error
				if total, per, err = e.store.MemoryUsage(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(total)/calls, "redis-B/call")
			for _, k := range []string{"snap:call", "snap:metric", "terminal", "open"} {
				b.ReportMetric(float64(per[k])/calls, k+"-B/call")
			}
		})
	}
}
