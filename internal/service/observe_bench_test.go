package service

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkPublishObserver is what the service does with a batch of 512
// acknowledged events of six types: count them per type and account, record
// their detection delay, keep the last on the status page. Allocations are per
// batch.
func BenchmarkPublishObserver(b *testing.B) {
	m, err := telemetry.NewMetrics()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	s := testSettings(&simtest.World{URL: "http://127.0.0.1:1"}, "nats://127.0.0.1:1", "redis://127.0.0.1:1", "i-1")
	board := newStatusBoard("v").add(s)
	types := []events.Type{events.CallCreated, events.CallEnded, events.Type("participant.status_changed"), events.Type("metric.finalized"), events.Type("user.status_changed"), events.Type("call.updated")}
	ack := jetstream.PubAck{Stream: "CALLCENTER"}
	batch := make([]publish.Published, 512)
	for i := range batch {
		batch[i] = publish.Published{Ack: ack, Committed: event.Committed{StreamID: "1-" + strconv.Itoa(i), Message: event.Message{
			ID: "ev-" + strconv.Itoa(i), Type: types[i%len(types)], Time: time.Now().Add(-time.Second)}}}
	}
	observe := publishObserver(b.Context(), m.Account("acme"), board.published(nil))
	b.ReportAllocs()
	for b.Loop() {
		observe(batch)
	}
}
