package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The bus's own limit on the machine the benchmark runs on: how fast JetStream
// alone accepts what callbus sends it. BenchmarkBacklog measures it right before
// and right after its end-to-end run, on the same server, and reports the ratio
// end-to-end ÷ raw, which says how much of the bus's capacity callbus uses,
// whatever the machine.

// rawMessages is the number of messages of one raw measurement: enough for a few
// seconds on a loaded 2-core machine, short beside the backlog run.
const rawMessages = 50000

// defaultEventSize is the median event body of BenchmarkBacklog (seed 3), in
// bytes (measured at 20,000 calls), the size of the measurement taken before the
// run, when the run's own median is not known yet (CALLBUS_BENCH_EVENT_SIZE
// overrides it); the one after the run uses the run's median. Both are logged.
const defaultEventSize = 1234

// rawPublishRate publishes rawMessages bodies of size bytes asynchronously, each
// with its own Nats-Msg-Id, into a new file-backed stream on the server of nc,
// with the relay's limit on acknowledgements in flight (publish.DefaultInFlight), and returns the
// messages per second from the first publish to the last acknowledgement. The
// stream is deleted afterwards. It also returns the CPU this process (the
// server and the publisher) spent per message.
func rawPublishRate(b testing.TB, nc *nats.Conn, size int) (float64, time.Duration) {
	b.Helper()
	ctx := b.Context()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(publish.DefaultInFlight))
	if err != nil {
		b.Fatal(err)
	}
	name := "RAWBENCH"
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: name, Subjects: []string{"rawbench.>"}, Storage: jetstream.FileStorage,
		Duplicates: 2 * time.Minute, Discard: jetstream.DiscardOld,
	}); err != nil {
		b.Fatalf("create %s: %v", name, err)
	}
	defer func() { _ = js.DeleteStream(context.WithoutCancel(ctx), name) }()
	body := make([]byte, size)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	start, cpu := time.Now(), cpumeter.Process()
	for i := range rawMessages {
		msg := &nats.Msg{Subject: "rawbench.acme.call.created", Data: body, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, "raw-"+strconv.Itoa(i))
		// A loaded machine may hold acknowledgements back for longer than the
		// library's default stall of 200 ms: wait as the relay does.
		if _, err := js.PublishMsgAsync(msg, jetstream.WithStallWait(10*time.Second)); err != nil {
			b.Fatalf("raw publish %d: %v", i, err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(2 * time.Minute):
		b.Fatalf("raw publish: %d acknowledgements missing after 2 minutes", js.PublishAsyncPending())
	}
	elapsed, cpu := time.Since(start), cpumeter.Process()-cpu
	s, err := js.Stream(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if info.State.Msgs != rawMessages {
		b.Fatalf("raw publish: the stream holds %d messages, want %d", info.State.Msgs, rawMessages)
	}
	return rawMessages / elapsed.Seconds(), cpu / rawMessages
}

// medianBodySize reads the sizes of every message of stream (an ordered consumer,
// sizes only) and returns the median, or 0 when the stream is empty.
func medianBodySize(b testing.TB, js jetstream.JetStream, stream string) int {
	b.Helper()
	ctx := b.Context()
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		b.Fatal(err)
	}
	sizes := make([]int, 0, info.State.Msgs)
	for uint64(len(sizes)) < info.State.Msgs {
		// A short last batch waits out MaxWait once.
		batch, err := cons.Fetch(1000, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		n := len(sizes)
		for m := range batch.Messages() {
			sizes = append(sizes, len(m.Data()))
		}
		if err := batch.Error(); err != nil {
			b.Fatalf("read %s: %v", stream, err)
		}
		if len(sizes) == n {
			b.Fatalf("read %s: %d of %d messages, then none", stream, n, info.State.Msgs)
		}
	}
	if len(sizes) == 0 {
		return 0
	}
	slices.Sort(sizes)
	return sizes[len(sizes)/2]
}

// rawRates is the bus's limit measured around a run.
type rawRates struct {
	before, after         float64       // messages per second
	cpuBefore, cpuAfter   time.Duration // CPU per message: the server and the publisher
	sizeBefore, sizeAfter int           // bytes per message
}

// mean is the raw rate the end-to-end figure is compared with.
func (r rawRates) mean() float64 { return (r.before + r.after) / 2 }

// report adds the raw rates and the ratio to b's results and returns the line that
// says what they mean.
func (r rawRates) report(b *testing.B, e2e float64) string {
	ratio := e2e / r.mean()
	b.ReportMetric(r.before, "raw-before-msg/s")
	b.ReportMetric(r.after, "raw-after-msg/s")
	b.ReportMetric(ratio, "e2e/raw")
	return fmt.Sprintf("ratio end-to-end ÷ raw JetStream = %.0f ÷ %.0f = %.2f (raw: %.0f msg/s of %d B before the run, %.0f msg/s of %d B after it; %.1f and %.1f µs of CPU per message, server and publisher)",
		e2e, r.mean(), ratio, r.before, r.sizeBefore, r.after, r.sizeAfter, micros(r.cpuBefore), micros(r.cpuAfter))
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
