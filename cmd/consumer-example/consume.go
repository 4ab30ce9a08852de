package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// fetchWait is how long one fetch waits for messages; it bounds how long a
// shutdown waits for the fetch in flight.
const fetchWait = time.Second

// ensureConsumer creates the durable pull consumer, or updates it to this
// configuration, when it exists. A new one starts at the beginning of the stream;
// an existing one resumes after its last ack.
func ensureConsumer(ctx context.Context, js jetstream.JetStream, c config) (jetstream.Consumer, error) {
	cc := jetstream.ConsumerConfig{
		Durable:       c.Durable,
		Description:   "callbus consumer-example: live state of agents and calls",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		// The server enforces the limit: a message that kills the process at every
		// delivery stops after MaxDeliver, and its advisory has it dead-lettered
		// (see watchMaxDeliveries). BackOff is the ack wait of each delivery (the
		// server's AckWait is its first), so a crash-looping message is retried
		// less and less often.
		MaxDeliver:    c.MaxDeliver,
		BackOff:       c.ackWaits(),
		AckWait:       c.AckWait,
		MaxAckPending: 1000,
	}
	if f := c.filters(); len(f) == 1 {
		cc.FilterSubject = f[0]
	} else {
		cc.FilterSubjects = f
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, c.Stream, cc)
	if err != nil {
		return nil, fmt.Errorf("create or update consumer %s on stream %s: %w", c.Durable, c.Stream, err)
	}
	return cons, nil
}

// consume fetches as many messages as it has free workers, so that no message
// waits in a buffer while its ack wait runs, and processes each in its own
// goroutine, until ctx ends. Fetch errors (a missed heartbeat, a reconnect, a
// leader change) are logged, counted and retried with a growing pause: only ctx
// stops the loop.
//
// Shutdown: when ctx ends it stops fetching; a message arriving after that is
// nak'ed at once; the messages in hand have shutdownTimeout to finish, and those
// still running then are cancelled and nak'ed. The return is nil.
func consume(ctx context.Context, cons jetstream.Consumer, p *processor, workers int, shutdownTimeout time.Duration, log zerolog.Logger) error {
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	stopTimer := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(shutdownTimeout, cancelWork)
		context.AfterFunc(work, func() { t.Stop() })
	})
	defer stopTimer()

	slots := make(chan struct{}, workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	pause := 10 * time.Millisecond
	for ctx.Err() == nil {
		n := acquire(ctx, slots, workers)
		if n == 0 {
			break
		}
		batch, err := cons.Fetch(n, jetstream.FetchMaxWait(fetchWait))
		if err == nil {
			got := 0
			for msg := range batch.Messages() {
				got++
				if ctx.Err() != nil { // arrived during shutdown: hand it back now
					p.nak(msg, 0, log)
					<-slots
					continue
				}
				wg.Go(func() {
					defer func() { <-slots }()
					p.process(work, msg)
				})
			}
			release(slots, n-got)
			err = batch.Error()
		} else {
			release(slots, n)
		}
		if err != nil && !errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
			p.metrics.fetchErrors.Inc()
			log.Warn().Err(err).Dur("retry_in_ms", pause).Msg("fetch failed; retrying")
			sleep(ctx, pause)
			pause = min(2*pause, 5*time.Second)
			continue
		}
		pause = 10 * time.Millisecond
	}
	return nil
}

// acquire waits for one free slot, then takes every other free one; it returns
// how many it took, 0 when ctx ended first.
func acquire(ctx context.Context, slots chan struct{}, size int) int {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < size {
		select {
		case slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

func release(slots chan struct{}, n int) {
	for range n {
		<-slots
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
