package poll

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/rs/zerolog"
)

// BenchmarkBatcherCommit is the poller's commit path after the diff, for a
// backlog: 4,000 calls a loop, each a new snapshot (300 bytes) and one event (the
// catalog's call.created example), queued in a batcher (outbox entries encoded,
// trace context attached), committed in batches of maxBatchEvents through the
// fenced Lua commit, the last ones by flush. Allocations are per loop: divide by
// 4,000 for a call's. `make bench-micro BENCH=BatcherCommit PKGS=./internal/poll/`
func BenchmarkBatcherCommit(b *testing.B) {
	const calls = 4000
	raw, err := os.ReadFile("../../schemas/examples/call.created.json")
	if err != nil {
		b.Fatal(err)
	}
	var env events.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		b.Fatal(err)
	}
	store, err := cursor.New(redistest.Start(b).Client(b), "acme")
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{Account: "acme", Prefix: "callcenter", Intervals: map[string]time.Duration{ResCalls: time.Second},
		Backfill: time.Hour, MetricsLookback: time.Hour}, nil, store, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	lease, err := store.Acquire(b.Context(), "bench", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	p.lease = func() cursor.Lease { return lease }
	snap := make([]byte, 300)
	evs := make([]events.Envelope, 1)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		bt := p.newBatcher(b.Context())
		for i := range calls {
			id := strconv.Itoa(n + i)
			evs[0] = env
			evs[0].ID = "evt-" + id
			if err := bt.add(write{kind: kindCall, id: id, snap: snap, events: evs}); err != nil {
				b.Fatal(err)
			}
		}
		if err := bt.flush(); err != nil {
			b.Fatal(err)
		}
		n += calls
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/call")
}
