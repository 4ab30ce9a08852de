package service

import (
	"context"
	"errors"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/fleet"
	"github.com/callbus/callbus/internal/telemetry"
)

// AccountSource is the accounts a fleet serves and the settings of each (the
// process's values with the account's laid over them): the accounts_dir watcher,
// or a caller's own store. It is safe for concurrent use.
type AccountSource interface {
	// Accounts lists the accounts now; an account's Digest changes whenever its
	// settings do.
	Accounts() []fleet.Account
	// Settings are the named account's valid settings (false: not listed now).
	Settings(account string) (config.Settings, bool)
}

// ProblemSource is an AccountSource that also reports the account files it
// refused (file and key named), shown on /status and counted in
// callbus_fleet_accounts_refused (*fleet.Dir is one).
type ProblemSource interface {
	Problems() []fleet.Problem
}

// fleetStandbyRetry is how often an account's new owner tries the lease while
// the previous owner hands it off (drains, then releases).
const fleetStandbyRetry = 500 * time.Millisecond

// runFleet serves the accounts the fleet assigns to this replica, each with
// parts of its own (runAccount), until ctx ends; then every account is handed
// off (stop polling, drain the outbox, release the lease) and the replica
// leaves the fleet.
func (p *process) runFleet(ctx context.Context, src AccountSource) error {
	if p.o.backfill != nil {
		return errors.New("poller backfill serves one account: give it the account's settings, without accounts_dir")
	}
	check, err := cursor.New(p.rdb, "callbus") // reads the server's settings, no key
	if err != nil {
		return err
	}
	if err := checkRedis(ctx, check, redisTarget(p.s), p.log, p.o.redisAdvice); err != nil {
		return err
	}
	// The membership lives 2/3 of a lease: a dead replica's accounts have their
	// new owner waiting before their leases expire. The lease holders (p.holder
	// is the member's name too) keep the assignment balanced and sticky.
	holders := func(ctx context.Context, accounts []string) (map[string]string, error) {
		return cursor.Holders(ctx, p.rdb, accounts)
	}
	f, err := fleet.New(p.rdb, p.holder, p.log.With().Str("component", "fleet").Logger(),
		fleet.WithTTL(p.s.LeaseTTL*2/3), fleet.WithHolders(holders))
	if err != nil {
		return err
	}
	p.board.setFleet(func() FleetStatus { return fleetStatus(f, src) })
	st := fleetState(f, src)
	st.Draining = p.draining.Load
	if err := p.metrics.ObserveFleet(st); err != nil {
		return err
	}
	stopHTTP, err := p.serve(fleetReady(p.holder, f))
	if err != nil {
		return err
	}
	defer stopHTTP()
	// Accounts no longer configured are served too, by their drain, until
	// their outbox is published (retired.go).
	retired := newRetirees(p.rdb, src, p.log.With().Str("component", "fleet").Logger())
	rctx, stopRetired := context.WithCancel(ctx)
	retiredDone := make(chan struct{})
	go func() { defer close(retiredDone); retired.run(rctx) }()
	defer func() { stopRetired(); <-retiredDone }()
	p.log.Info().Str("member", p.holder).Msg("fleet: joining")
	err = f.Run(ctx, retired.accounts, func(ctx context.Context, name string) error {
		s := accountSettings(src, name)
		if s == nil { // removed or refused (meanwhile, or before this process started)
			return p.drainAccount(ctx, name)
		}
		return p.runAccount(ctx, s)
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		p.log.Info().Msg("stopped")
		return nil
	}
	return err
}

// fleetStatus is the fleet's part of /status.
func fleetStatus(f *fleet.Fleet, src AccountSource) FleetStatus {
	fs := FleetStatus{Members: f.Members(), Listed: len(src.Accounts())}
	if ps, ok := src.(ProblemSource); ok {
		for _, p := range ps.Problems() {
			fs.Problems = append(fs.Problems, p.String())
		}
	}
	return fs
}

// fleetReady is a fleet member's readiness: the process is healthy (Redis
// answers), whatever the role it has for each account.
func fleetReady(holder string, f *fleet.Fleet) readiness {
	return func(body map[string]any) string {
		body["role"], body["instance"] = "member", holder
		body["members"], body["accounts"] = len(f.Members()), len(f.Owned())
		return ""
	}
}

// fleetState says where the fleet's gauges read.
func fleetState(f *fleet.Fleet, src AccountSource) telemetry.FleetState {
	st := telemetry.FleetState{
		Members: func() int64 { return int64(len(f.Members())) },
		Owned:   func() int64 { return int64(len(f.Owned())) },
		Listed:  func() int64 { return int64(len(src.Accounts())) },
	}
	if ps, ok := src.(ProblemSource); ok {
		st.Refused = func() int64 {
			files := map[string]bool{}
			for _, p := range ps.Problems() {
				files[p.File] = true
			}
			return int64(len(files))
		}
	}
	return st
}

// accountSettings are the settings of account name (nil: not listed). A pointer,
// not a copy on the frames of the account's goroutine: that goroutine waits
// between the poller's turns for as long as the account is served here, and
// the collector shrinks a waiting goroutine's stack only while a quarter of it
// is in use (see poll.apart); the settings (600 bytes) held twice on it kept it
// at twice the size.
func accountSettings(src AccountSource, name string) *config.Settings {
	s, ok := src.Settings(name)
	if !ok {
		return nil
	}
	if s.Account == "" {
		s.Account = name
	}
	return &s
}
