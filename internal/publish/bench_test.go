package publish

import (
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/cpumeter"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// BenchmarkRelayBatch relays 4,096 outbox entries of 1,234 bytes (the median
// event of the backlog benchmark) a loop, to a file-backed stream, as Run does:
// read the outbox a batch at a time, publish asynchronously with the contract's
// headers while earlier batches wait for their acks (up to DefaultInFlight), take
// the acks in order, trim in bulk. The commits that fill the outbox are outside
// the timer; allocations are per loop (divide by 4,096 for an event's).
// cpu-ns/event is this process's CPU time while the relay runs (its NATS server's
// included), steadier than ns/event on a busy machine.
func BenchmarkRelayBatch(b *testing.B) {
	const events, commit = 4096, 512
	bd := newBed(b, false)
	js, err := jetstream.New(bd.nats.Conn(b), jetstream.WithPublishAsyncMaxPending(DefaultInFlight))
	if err != nil {
		b.Fatal(err)
	}
	r := NewRelay(js.Conn(), js, bd.outbox(), RelayConfig{Stream: "CALLCENTER"}, zerolog.Nop())
	body := make([]byte, 1234)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	bodies := make([][]byte, commit)
	for i := range bodies {
		bodies[i] = body
	}
	ctx := b.Context()
	fl := &flight{}
	b.ReportAllocs()
	n, cpu := 0, time.Duration(0)
	for b.Loop() {
		b.StopTimer()
		for range events / commit {
			bd.commitBodies(b, bodies...)
		}
		b.StartTimer()
		cpu0 := cpumeter.Process() // the relay's, the in-process NATS server's and the Redis client's
		for {
			k, err := r.step(ctx, fl)
			if err != nil {
				b.Fatal(err)
			}
			if k == 0 {
				break
			}
		}
		cpu += cpumeter.Process() - cpu0
		n += events
	}
	if l := bd.outboxLen(b); l != 0 {
		b.Fatalf("outbox holds %d entries after the relay", l)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
	b.ReportMetric(float64(cpu)/float64(n), "cpu-ns/event")
}
