package main

import (
	"context"
	"fmt"
	"io"

	"github.com/callbus/callbus/internal/service"
)

const accountUsage = `usage: poller account forget --account NAME [--force] [--config FILE]

Removes every Redis key of an account no longer served (snapshots, cursors, call
index, outbox, lease): what a fleet keeps of an account after its file left
accounts_dir and its outbox was drained. It takes the account's lease, so no
leader writes meanwhile, and refuses while a replica holds it (still serving or
draining the account), while the account is configured (its file in
accounts_dir, or CALLBUS_ACCOUNT), or while its outbox holds events never
published. --force drops such events and ignores the configuration: a fleet
that still lists the account then starts it afresh. Other accounts' keys are
never touched. Exit status 1 when refused.
`

// runAccount is `poller account forget`.
func runAccount(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "forget" {
		fs := newFlags("account", accountUsage, stderr)
		if len(args) > 0 && wantsHelp(args[:1]) {
			return parseFlags(fs, args, stdout)
		}
		fs.Usage()
		return exitCode{2, fmt.Errorf("account: want forget")}
	}
	fs := newFlags("account forget", accountUsage, stderr)
	file := fs.String("config", "", "JSON values `FILE` (see `poller config docs`): Redis, accounts_dir, lease TTL")
	account := fs.String("account", "", "the account whose keys to remove; required")
	force := fs.Bool("force", false, "remove them even while the account is configured or its outbox holds events")
	if err := parseFlags(fs, args[1:], stdout); err != nil {
		return err
	}
	if *account == "" {
		return exitCode{2, fmt.Errorf("account forget: --account: required")}
	}
	s, err := loadConfig(getenv, *file)
	if err != nil {
		return err
	}
	n, err := service.ForgetAccount(ctx, s, *account, *force)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "forgot account %s: %d keys removed from Redis\n", *account, n)
	return err
}
