package service

import (
	"context"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/rs/zerolog"
)

// account is what one account has of its own in the process: its store, its
// instruments (labelled account=<name>), its part of the status page, its
// leader session (limiter, API client, relay, poller) and its leadership. Two
// accounts share no goroutine, limiter or window of publishes awaiting their
// acknowledgement: one that is throttled, refused or slow delays no other. They
// share the process's clients (shared.go): the Redis client, the NATS
// connection and its JetStream context, and the HTTP transport to the APIs,
// whose pool of connections has no per-host limit.
type account struct {
	name    string
	store   *cursor.Store
	metrics *telemetry.Metrics
	board   *accountBoard
	session leaderSession
	lead    *poll.Leadership
	removed func()
	log     zerolog.Logger // naming the account (runAccount)
}

// newAccount builds the account of s on the process's connections. ctx is the
// account's: its end is a shutdown or a hand-off, and the leader then drains the
// outbox before it releases the lease. close undoes what newAccount registered.
func (p *process) newAccount(ctx context.Context, s config.Settings, store *cursor.Store, log zerolog.Logger,
	lopts ...poll.LeadershipOption) (_ *account, err error) {
	m := p.metrics.Account(s.Account)
	board := p.board.add(s)
	a := &account{name: s.Account, store: store, metrics: m, board: board, removed: func() { p.board.remove(board) }}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	a.session, err = newLeaderSession(a.ctx(ctx), s, p.o, p.parts(s, store, m, board), log)
	if err != nil {
		return nil, err
	}
	a.lead = poll.NewLeadership(store, p.holder, s.LeaseTTL, log, append(lopts, poll.WithRoleObserver(m.SetLeader))...)
	board.attach(a.lead, store, a.session.lim)
	return a, nil
}

// parts are the process's parts an account of settings s uses, with its store,
// instruments and status.
func (p *process) parts(s config.Settings, store *cursor.Store, m *telemetry.Metrics, board *accountBoard) parts {
	return parts{js: p.js, transport: p.api.get(s.LeaseTTL), maxPayload: p.nc.MaxPayload, reconnects: p.reconnects,
		store: store, metrics: m, board: board}
}

// ctx is ctx naming the account, for the shared clients' hooks.
func (a *account) ctx(ctx context.Context) context.Context {
	return telemetry.ContextWithAccount(ctx, a.name)
}

// close takes the account off the status page and its gauges off /metrics. Its
// publishes still awaiting an acknowledgement (the relay stopped waiting for
// them) leave the shared JetStream context at their timeout; its API
// connections are the shared transport's.
func (a *account) close() {
	a.metrics.Stop()
	a.removed()
}

// runAccount serves one account of the fleet until ctx ends, then hands it off:
// the leader stops polling, drains the outbox and releases the lease (see
// leaderSession.run and poll.Leadership.Run). It returns nil once handed off.
// Its frame stays small (openAccount builds the account): the account's
// goroutine waits under it for as long as the account is served here.
func (p *process) runAccount(ctx context.Context, s *config.Settings) error {
	a, err := p.openAccount(ctx, s)
	if err != nil {
		return err
	}
	defer a.close()
	a.log.Info().Msg("account: serving")
	err = a.lead.Run(a.ctx(ctx), a.session.run)
	if ctx.Err() != nil {
		a.log.Info().Msg("account: handed off")
		return nil
	}
	return err
}

// openAccount builds the account of s for runAccount.
func (p *process) openAccount(ctx context.Context, s *config.Settings) (*account, error) {
	log := p.log.With().Str("account", s.Account).Logger()
	store, err := cursor.New(p.rdb, s.Account, cursor.WithOutboxCache(outboxCache))
	if err != nil {
		return nil, err
	}
	// The previous owner releases the lease when it has drained: try often, not
	// only when the lease would expire.
	a, err := p.newAccount(ctx, *s, store, log, poll.WithStandbyRetry(fleetStandbyRetry))
	if err != nil {
		return nil, err
	}
	a.log = log
	return a, nil
}
