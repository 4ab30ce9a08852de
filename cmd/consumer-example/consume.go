package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pullBatch is how many messages are pulled ahead. Small, because on shutdown the
// ones already received are finished before exiting.
const pullBatch = 16

// ensureConsumer creates the durable pull consumer, or updates it to this
// configuration (filters, ack wait) when it exists. A new one starts at the
// beginning of the stream; an existing one resumes after its last ack.
func ensureConsumer(ctx context.Context, js jetstream.JetStream, c config) (jetstream.Consumer, error) {
	cc := jetstream.ConsumerConfig{
		Durable:       c.Durable,
		Description:   "callbus consumer-example: live state of agents and calls",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		// Unlimited on the server: the processor counts deliveries (NumDelivered)
		// and dead-letters at --max-deliver, so the server never drops a message
		// silently; an outage of our own store (Redis) does not count.
		MaxDeliver: -1,
	}
	if len(c.Filters) == 1 {
		cc.FilterSubject = c.Filters[0]
	} else {
		cc.FilterSubjects = c.Filters
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, c.Stream, cc)
	if err != nil {
		return nil, fmt.Errorf("create or update consumer %s on stream %s: %w", c.Durable, c.Stream, err)
	}
	return cons, nil
}

// consume pulls messages and processes them one at a time, in stream order, until
// ctx ends. Then it drains: it stops pulling, finishes the messages already
// received, and returns nil. Finishing is bounded by shutdownTimeout; a message
// not finished by then is left unacknowledged and is redelivered after the ack
// wait, to this or another replica. No message is lost either way.
func consume(ctx context.Context, cons jetstream.Consumer, p *processor, shutdownTimeout time.Duration) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(pullBatch))
	if err != nil {
		return fmt.Errorf("pull messages: %w", err)
	}
	defer it.Stop()
	// The work context outlives ctx by up to shutdownTimeout, so that a message in
	// hand is finished and acked rather than cut off half way.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	go func() {
		select {
		case <-ctx.Done():
		case <-work.Done():
			return
		}
		it.Drain() // stop pulling; Next returns what is buffered, then ErrMsgIteratorClosed
		t := time.NewTimer(shutdownTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancelWork()
		case <-work.Done():
		}
	}()
	for {
		msg, err := it.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) && ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("next message: %w", err)
		}
		if work.Err() != nil {
			continue // out of time: leave it for redelivery
		}
		p.process(work, msg)
	}
}
