package publish

import (
	"testing"

	"github.com/rs/zerolog"
)

// BenchmarkRelayBatch relays batches of 256 outbox entries of 1,234 bytes (the
// median event of the backlog benchmark) to a file-backed stream: read the outbox,
// publish asynchronously with the contract's headers, wait for every ack in
// order, trim. The commits that fill the outbox are outside the timer.
func BenchmarkRelayBatch(b *testing.B) {
	const batch = 256
	bd := newBed(b, false)
	r := NewRelay(bd.js, bd.js, bd.outbox(), RelayConfig{Stream: "CALLCENTER", Batch: batch}, zerolog.Nop())
	body := make([]byte, 1234)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	bodies := make([][]byte, batch)
	for i := range bodies {
		bodies[i] = body
	}
	ctx := b.Context()
	b.ReportAllocs()
	last, n := "", 0
	for b.Loop() {
		b.StopTimer()
		bd.commitBodies(b, bodies...)
		b.StartTimer()
		for done := 0; done < batch; {
			k, next, err := r.once(ctx, last)
			if err != nil {
				b.Fatal(err)
			}
			done, last = done+k, next
		}
		n += batch
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
}
