package service

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/callbus/callbus/internal/backfill"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/rs/zerolog"
)

// drainAccount is the fleet's work for a retired account (retiredDigest): one
// no longer configured whose outbox may still hold events. It leads the account
// as any owner does (its lease, fenced, handed over the same way) but polls
// nothing: its relay publishes the outbox until it is empty, waiting for NATS
// as long as it takes, then the lease is released. It returns when ctx ends:
// the fleet stops the work once the account is drained (retirees.check), listed
// again, or moved, and at shutdown (the events left wait for the next owner or
// start). While it drains, /status shows the account draining with the events
// left, and /metrics its callbus_outbox_depth and callbus_fleet_accounts_draining.
// Stream and subjects are the process's settings: an account file cannot change
// them.
func (p *process) drainAccount(ctx context.Context, name string) error {
	s := p.s
	s.Account = name
	log := p.log.With().Str("account", name).Str("component", "drain").Logger()
	store, err := cursor.New(p.rdb, name)
	if err != nil {
		return err
	}
	ctx = telemetry.ContextWithAccount(ctx, name)
	m := p.metrics.Account(name)
	defer m.Stop()
	board := p.board.addDraining(s)
	defer p.board.remove(board)
	js := p.js
	fence := &leaseFence{store: store}
	relay := newRelay(ctx, s, p.parts(s, store, m, nil), fence, board.published(p.o.onPublished), log)
	if err := m.ObserveState(telemetry.State{OutboxDepth: store.OutboxLen, OutboxOldest: store.OutboxOldest,
		PublishErrors: relay.Stats.Errors.Load}); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	lead := poll.NewLeadership(store, p.holder, s.LeaseTTL, log, poll.WithStandbyRetry(fleetStandbyRetry), poll.WithRoleObserver(m.SetLeader))
	board.attach(lead, store, nil)
	p.draining.Add(1)
	uncount := sync.OnceFunc(func() { p.draining.Add(-1) })
	defer uncount()
	log.Info().Msg("account: retired; draining its outbox")
	lctx, drained := context.WithCancel(ctx)
	defer drained()
	_ = lead.Run(lctx, func(wctx context.Context, lease func() cursor.Lease) error {
		fence.term.Store(&lease)
		rctx, stopRelay := context.WithCancel(wctx)
		relayDone := make(chan struct{})
		go func() {
			defer close(relayDone)
			if ensureStream(rctx, js, streamConfig(s), log) == nil {
				_ = relay.Run(rctx)
			}
		}()
		err := waitDrained(wctx, store, log)
		stopRelay()
		<-relayDone
		if err == nil {
			log.Info().Msg("account: retired account drained; its keys stay until `poller account forget`")
			uncount()
			drained() // Run releases the lease and returns
		}
		return nil
	})
	<-ctx.Done()
	return nil
}

// waitDrained returns once the outbox is empty (nil) or ctx ends, reading it
// again after a Redis failure.
func waitDrained(ctx context.Context, store *cursor.Store, log zerolog.Logger) error {
	for {
		err := backfill.WaitOutbox(ctx, store, 0)
		if err == nil || ctx.Err() != nil {
			return err
		}
		log.Warn().Err(err).Msg("drain: cannot read the outbox; trying again")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
