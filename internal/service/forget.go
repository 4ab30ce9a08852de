package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
)

// Refusals of ForgetAccount that --force overrides.
var (
	// ErrStillConfigured: the account is still configured (its file is in
	// accounts_dir, or it is the account of a single-account configuration).
	ErrStillConfigured = errors.New("the account is still configured")
	// ErrOutboxNotEmpty: the account's outbox holds events never published.
	ErrOutboxNotEmpty = errors.New("the account's outbox holds events never published")
)

// ForgetAccount removes every Redis key of a retired account (poller account
// forget): snapshots, cursors, call index, outbox, fence and lease, and no key of
// another account. It takes the account's lease first, so no leader commits
// meanwhile, and refuses (an error naming the holder, matching
// cursor.ErrNotLeader) while another process holds it: one still serving or
// draining the account. Unless force, it also refuses an account still
// configured in s (ErrStillConfigured) and an outbox not empty
// (ErrOutboxNotEmpty): the fleet drains it once NATS is reachable. It returns
// the number of keys removed.
func ForgetAccount(ctx context.Context, s config.Settings, account string, force bool) (int, error) {
	if !force {
		if err := stillConfigured(s, account); err != nil {
			return 0, err
		}
	}
	rdb, err := connectRedis(s)
	if err != nil {
		return 0, err
	}
	defer rdb.Close()
	store, err := cursor.New(rdb, account)
	if err != nil {
		return 0, err
	}
	holder := "forget/" + s.InstanceID + "/" + randomSuffix()
	lease, err := store.Acquire(ctx, holder, s.LeaseTTL)
	if nl := (*cursor.NotLeaderError)(nil); errors.As(err, &nl) {
		return 0, fmt.Errorf("account %s: its lease is held by %s (%v left): a replica still serves or drains it; "+
			"remove its account file and wait until no /status shows it, then try again: %w", account, nl.Holder, nl.TTL, err)
	}
	if err != nil {
		return 0, fmt.Errorf("account %s: take its lease: %w", account, err)
	}
	if !force {
		n, err := store.OutboxLen(ctx)
		if err == nil && n > 0 {
			err = fmt.Errorf("account %s: %w (%d events): let a fleet member drain it (NATS reachable), or --force to drop them", account, ErrOutboxNotEmpty, n)
		}
		if err != nil {
			if rerr := store.Release(context.WithoutCancel(ctx), lease); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return 0, err
		}
	}
	n, err := store.Forget(ctx, lease)
	if err != nil {
		return n, fmt.Errorf("account %s: %d keys removed, then: %w (run the command again)", account, n, err)
	}
	return n, nil
}

// stillConfigured returns ErrStillConfigured (wrapped, saying where) when s
// configures account: a file of it in accounts_dir, good or refused (a refused
// file's account is drained, not forgotten), or the one account of s.
func stillConfigured(s config.Settings, account string) error {
	if s.AccountsDir == "" {
		if s.Account == account {
			return fmt.Errorf("account %s: %w (it is the account of this configuration)", account, ErrStillConfigured)
		}
		return nil
	}
	file := filepath.Join(s.AccountsDir, account+".json")
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("account %s: %w: remove %s first (the fleet then drains its outbox)", account, ErrStillConfigured, file)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("account %s: accounts directory: %w", account, err)
	}
	return nil
}
