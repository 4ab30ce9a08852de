package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/service"
	"github.com/rs/zerolog"
)

const stateUsage = `usage: poller state [--account NAME] [--json] [--config FILE]
       poller state rewind --account NAME --resource calls --to T [--ask-leader] [--json]

Prints each account's state as Redis and the stream hold it: the lease (holder,
fencing token, term start, time left), each resource's cursor and last cycle,
the outbox (length, oldest entry's age, last id), the stream's newest
Callbus-Outbox-Id, snapshot counts and Redis bytes, the state epoch and the last
rollback check, the backfill checkpoint and the operators' audit list. It only
reads, with the poller running or not; without --account, every account
configured (a fleet: each file of accounts_dir) and every one with keys in Redis.

rewind makes the account's next calls cycle re-read calls created since T (a
date or RFC 3339 date-time), less the calls overlap. Snapshots stay, so nothing
unchanged is announced again and what was missed gets the id it would have had.
It runs under the account's lease: it takes the lease when nobody holds it, and
refuses (exit status 1) while another process leads, unless --ask-leader, which
queues the request for the leader to act on between two cycles and waits for its
outcome (--wait). Each outcome is audited: a log line on stderr and the
account's audit list (poller state shows it).
`

// runState is `poller state` and `poller state rewind`.
func runState(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "rewind" {
		return runRewind(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := newFlags("state", stateUsage, stderr)
	file := fs.String("config", "", "JSON values `FILE` (see `poller config docs`): Redis, NATS, accounts_dir")
	account := fs.String("account", "", "the account `NAME` to show (default: every account)")
	asJSON := fs.Bool("json", false, "print a JSON array of accounts (field names: docs/operator-tools.md#poller-state)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	s, err := loadConfig(getenv, *file)
	if err != nil {
		return err
	}
	accounts, err := stateAccounts(ctx, s, getenv, *file, *account)
	if err != nil {
		return err
	}
	states, err := service.ReadState(ctx, s, accounts)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, states)
	}
	return writeStateText(stdout, states, time.Now())
}

// stateAccounts are the settings of the accounts to show: the one named, or
// every one configured and every one Redis holds.
func stateAccounts(ctx context.Context, s config.Settings, getenv func(string) string, file, account string) ([]config.Settings, error) {
	var configured []string
	settings := map[string]config.Settings{}
	if s.AccountsDir != "" {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		src, err := watchAccounts(wctx, s.AccountsDir, getenv, file, zerolog.Nop())
		if err != nil {
			return nil, err
		}
		for _, a := range src.Accounts() {
			configured = append(configured, a.Name)
			settings[a.Name], _ = src.Settings(a.Name)
		}
	} else if s.Account != "" {
		configured, settings[s.Account] = []string{s.Account}, s
	}
	names := []string{account}
	if account == "" {
		var err error
		if names, err = service.StateAccounts(ctx, s, configured); err != nil {
			return nil, err
		}
	}
	out := make([]config.Settings, 0, len(names))
	for _, n := range names {
		a, ok := settings[n]
		if !ok {
			a = s
			a.Account = n
		}
		out = append(out, a)
	}
	return out, nil
}

// runRewind is `poller state rewind`.
func runRewind(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("state rewind", stateUsage, stderr)
	file := fs.String("config", "", "JSON values `FILE` (see `poller config docs`): Redis, lease TTL")
	account := fs.String("account", "", "the account `NAME` to rewind; required")
	resource := fs.String("resource", "calls", "the `RESOURCE` to re-read: calls (the only one with a time cursor)")
	to := fs.String("to", "", "re-read calls created since `T`, a date or RFC 3339 date-time; required")
	ask := fs.Bool("ask-leader", false, "when another process leads the account, have it rewind between two cycles instead of refusing")
	wait := fs.Duration("wait", 2*time.Minute, "how long to wait for the leader's outcome (--ask-leader)")
	asJSON := fs.Bool("json", false, "print the audit entry of the outcome as JSON")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *account == "" || *to == "" {
		return exitCode{2, fmt.Errorf("state rewind: --account and --to are required (see `poller state --help`)")}
	}
	t, err := parseDate(*to)
	if err != nil {
		return exitCode{2, fmt.Errorf("state rewind: --to: %w", err)}
	}
	s, err := loadConfig(getenv, *file)
	if err != nil {
		return err
	}
	log := newLogger(stderr, s.LogLevel, s.LogFormat)
	req := service.RewindRequest{Account: *account, Resource: *resource, To: t, By: operator(), AskLeader: *ask, Wait: *wait}
	e, err := service.Rewind(ctx, s, req, log)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, e)
	}
	_, err = fmt.Fprintf(stdout, "account %s: rewound %s to %s by %s (token %d): %s\n", *account, e.Resource, e.To.Format(time.RFC3339), e.Holder, e.Token, e.Result)
	return err
}

// operator names who runs the command, for the audit: user@host.
func operator() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
