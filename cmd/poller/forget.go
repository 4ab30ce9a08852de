package main

import (
	"context"
	"fmt"
	"io"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/service"
)

const forgetUsage = `usage: poller forget --account NAME (--user ID | --phone NUMBER) [--config FILE]

Erasure of one person: removes a user's name, email and phone from the
account's snapshots in Redis, and the agent's name from the snapshots of the
calls assigned to the user (--user), and counts the outbox entries that still
hold the person's values (--user, or a caller's --phone, looked for raw and as
the account's data policy hashes it). It takes the account's lease, so no
leader writes meanwhile, and refuses while a replica holds it: stop the
replicas serving the account first. A value the API still serves comes back at
the next read, in the form the data policy gives it, without an event. The
stream is not touched: docs/data-policy.md says how an operator purges it.
(poller account forget, by contrast, removes a whole account's keys.)
`

// runForget is `poller forget`.
func runForget(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("forget", forgetUsage, stderr)
	file := fs.String("config", "", "JSON values `FILE` (see `poller config docs`): Redis, accounts_dir, the data policy")
	account := fs.String("account", "", "the account holding the person's values; required")
	user := fs.Int64("user", 0, "the user (agent) id whose values to remove")
	phone := fs.String("phone", "", "the caller's phone number to look for, as the API gives it")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case *account == "":
		return exitCode{2, fmt.Errorf("forget: --account: required")}
	case (*user == 0) == (*phone == ""):
		return exitCode{2, fmt.Errorf("forget: give --user or --phone, one of the two")}
	}
	s, err := loadConfig(getenv, *file)
	if err != nil {
		return err
	}
	if s.AccountsDir != "" { // a fleet: the account's own file gives its policy
		base, err := config.ProcessValues(getenv, *file)
		if err != nil {
			return err
		}
		af, err := config.ReadAccountFile(s.AccountsDir, *account+".json", base)
		if err != nil {
			return fmt.Errorf("forget: account %s: %w", *account, err)
		}
		s.DataPolicy = af.Settings.DataPolicy
	}
	rep, err := service.ForgetPerson(ctx, s, *account, s.DataPolicy, service.Person{UserID: *user, Phone: *phone})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "account %s: %d snapshots rewritten without the person's values; %d outbox entries still hold them "+
		"(published within seconds, then kept at most 3 minutes: purge the stream as docs/data-policy.md says)\n",
		*account, rep.Snapshots, rep.Outbox)
	return err
}
