package main

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// logLag logs the consumer's backlog every interval until ctx ends: pending is
// what the stream holds that this consumer has not received yet (its lag),
// ack_pending what it received and has not acknowledged.
func logLag(ctx context.Context, cons jetstream.Consumer, every time.Duration, log zerolog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		info, err := cons.Info(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn().Err(err).Msg("consumer info")
			}
			continue
		}
		log.Info().Uint64("pending", info.NumPending).Int("ack_pending", info.NumAckPending).
			Int("redelivered", info.NumRedelivered).Uint64("stream_seq", info.Delivered.Stream).Msg("lag")
	}
}
