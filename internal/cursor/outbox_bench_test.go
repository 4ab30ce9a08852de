package cursor

import (
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
)

// BenchmarkReadOutbox reads an outbox a batch at a time, as the relay does:
// bodies of 1,234 bytes (the backlog benchmark's median event) with type and
// time as the poller commits them; "traced" entries carry a traceparent header
// (a poller exporting traces), the others none. Batches of 512 are a backlog's,
// of 32 a relay keeping up. "cached" reads what the store just committed, as the
// relay in the poller's process does (WithOutboxCache: from memory, and the
// outbox's last id from Redis). Allocations are per batch; cpu-ns/entry is the
// reader's CPU alone, steadier than ns/entry on a busy machine.
func BenchmarkReadOutbox(b *testing.B) {
	for _, c := range []struct {
		name           string
		n              int
		traced, cached bool
	}{{"512-traced", 512, true, false}, {"512", 512, false, false}, {"32", 32, false, false}, {"512-cached", 512, false, true}} {
		b.Run(c.name, func(b *testing.B) { benchReadOutbox(b, c.n, c.traced, c.cached) })
	}
}

func benchReadOutbox(b *testing.B, n int, traced, cached bool) {
	var opts []Option
	if cached {
		opts = append(opts, WithOutboxCache(n))
	}
	e := newEnv(b, opts...)
	l := mustAcquire(b, e.store, "bench", time.Hour)
	body := make([]byte, 1234)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	var bt Batch
	for i := range n {
		m := event.Message{
			ID: "ev-" + strconv.Itoa(i), Subject: "callcenter.bench.call.created", Type: events.CallCreated,
			Time: time.Date(2026, 11, 24, 8, 0, i%60, 0, time.UTC), Data: body,
		}
		if traced {
			m.Headers = map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
		}
		bt.Events = append(bt.Events, m)
	}
	after := ""
	if cached { // a first commit the second chains on (OutboxSeen): the second is cached
		first := mustCommit(b, e.store, l, Batch{Events: bt.Events[:1]})
		after = first.StreamIDs[0]
		bt.OutboxSeen = after
	}
	mustCommit(b, e.store, l, bt)
	ctx := b.Context()
	b.ReportAllocs()
	cpu0 := cpumeter.Process() // the client's, not the redis-server's
	for b.Loop() {
		recs, err := e.store.ReadOutbox(ctx, after, n)
		if err != nil || len(recs) != n {
			b.Fatalf("ReadOutbox = %d records, %v; want %d", len(recs), err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
	b.ReportMetric(float64(cpumeter.Process()-cpu0)/float64(b.N*n), "cpu-ns/entry")
}
