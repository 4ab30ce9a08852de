package service

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/publish"
	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// leaderSession is what a replica does while it holds the lease: provision the
// stream and relay the outbox in the background, poll, and, when the service
// shuts down (not when the lease is lost: the new leader publishes), drain the
// outbox to JetStream within the shutdown timeout.
type leaderSession struct {
	service      context.Context // its end means shutdown
	work         *leaderWork     // polling, or a backfill first or alone
	relay        *publish.Relay
	fence        *leaseFence
	lim          *callcenter.Limiter
	js           jetstream.JetStream
	stream       publish.StreamConfig
	drainTimeout time.Duration
	log          zerolog.Logger
}

// run is the leadership's work (poll.Work): it returns when ctx ends or the
// lease is lost, with the poller's error.
func (ls *leaderSession) run(ctx context.Context, lease func() cursor.Lease) error {
	ls.fence.term.Store(&lease)
	rctx, stopRelay := context.WithCancel(ctx)
	relayDone := make(chan struct{})
	go func() {
		if ensureStream(rctx, ls.js, ls.stream, ls.log) != nil {
			close(relayDone)
			return
		}
		// Started, not run: an idle relay keeps no goroutine (publish.Relay.Start).
		ls.relay.Start(rctx, func() { close(relayDone) })
	}()
	err := ls.work.run(ctx, lease)
	stopRelay()
	<-relayDone
	if ls.service.Err() != nil {
		ls.drain(ctx)
	}
	return err
}

// drain publishes what is committed before the lease is released; what it
// cannot publish in time stays in the outbox for the next leader.
func (ls *leaderSession) drain(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ls.drainTimeout)
	defer cancel()
	if err := ls.relay.Drain(ctx); err != nil {
		ls.log.Warn().Err(err).Msg("shutdown: outbox not drained; the next leader publishes the rest")
	}
}

// leaseFence confirms the lease of the current leader term for the relay, which
// is built once and runs in every term: it asks before each batch, so a paused
// ex-leader publishes nothing stale.
type leaseFence struct {
	store *cursor.Store
	term  atomic.Pointer[func() cursor.Lease] // the term's lease, set when it starts
}

func (f *leaseFence) holds(ctx context.Context) (time.Duration, error) {
	lease := f.term.Load()
	if lease == nil {
		return 0, cursor.ErrNotLeader
	}
	return f.store.Holds(ctx, (*lease)())
}

// ensureStream provisions the stream, retrying while NATS is away. A stream that
// cannot hold callbus's subjects is an operator's error: it is logged, and events
// wait in the outbox until it is fixed.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg publish.StreamConfig, log zerolog.Logger) error {
	bo := backoff.NewExponentialBackOff()
	bo.MaxInterval = 10 * time.Second
	bo.MaxElapsedTime = 0
	return backoff.RetryNotify(func() error {
		_, notes, err := publish.EnsureStream(ctx, js, cfg)
		for _, n := range notes {
			log.Warn().Str("stream", cfg.Name).Msg("stream settings differ from the configuration: " + n)
		}
		return err
	}, backoff.WithContext(bo, ctx), func(err error, d time.Duration) {
		servers, advice := natsAdvice(js.Conn(), err)
		log.Error().Err(err).Str("nats", servers).Str("stream", cfg.Name).Dur("retry_in_ms", d).
			Msg("nats: stream not ready, events wait in the outbox: " + advice)
	})
}
