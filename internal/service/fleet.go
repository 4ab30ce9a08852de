package service

import (
	"context"
	"errors"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/fleet"
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
// refused (file and key named), shown on /status.
type ProblemSource interface {
	Problems() []string
}

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
	if err := checkRedis(ctx, check, p.log); err != nil {
		return err
	}
	// The membership lives no longer than a lease: a dead replica's accounts get
	// a new owner before their leases can be taken.
	f, err := fleet.New(p.rdb, p.holder, p.log.With().Str("component", "fleet").Logger(), fleet.WithTTL(p.s.LeaseTTL))
	if err != nil {
		return err
	}
	p.board.setFleet(func() FleetStatus { return fleetStatus(f, src) })
	stopHTTP, err := p.serve(fleetReady(p.holder, f))
	if err != nil {
		return err
	}
	defer stopHTTP()
	p.log.Info().Str("member", p.holder).Msg("fleet: joining")
	err = f.Run(ctx, src.Accounts, func(ctx context.Context, name string) error {
		s, ok := src.Settings(name)
		if !ok {
			return nil // removed meanwhile: the fleet stops the work
		}
		if s.Account == "" {
			s.Account = name
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
		fs.Problems = ps.Problems()
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
