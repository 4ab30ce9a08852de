package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/service"
)

const resyncUsage = `usage: poller resync --resources users,teams,calls [--entity calls/812] [--since T] [flags]

Re-announces the current state of the account's entities through the outbox, as
user.snapshot, team.snapshot and call.snapshot events (docs/consuming.md, "Resync"):
a consumer that lost its state applies them as upserts. The account's leader does
the work between two poll cycles, fenced by its lease and within its rate budget;
this command queues the request in Redis, follows its progress, and exits 0 when
it is done. Any change found on the way is announced first by the usual events.
Calls: those created since --since (default: the calls_backfill_hours window) that
the poller still knows. Exit status 1 when no replica leads the account within
--wait, or when the run fails.
`

// runResync is `poller resync`.
func runResync(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("resync", resyncUsage, stderr)
	file := fs.String("config", "", "JSON values `FILE` (see `poller config docs`): Redis and the account")
	resources := fs.String("resources", strings.Join(poll.ResyncResources, ","), "what to re-announce: users, teams, calls (comma-separated)")
	entity := fs.String("entity", "", "one entity only: calls/<id>, users/<id> or teams/<id>")
	since := fs.String("since", "", "calls created since: a date (2024-01-31), a date-time (RFC 3339) or a duration back from now (6h)")
	wait := fs.Duration("wait", time.Minute, "how long to wait for the leader to take the request before withdrawing it")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	req, err := resyncRequest(*resources, *entity, *since, time.Now())
	if err != nil {
		return exitCode{2, fmt.Errorf("resync: %w", err)}
	}
	s, err := loadConfig(getenv, *file)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "resync %s of account %s: %s%s queued for the leader\n", req.Run, s.Account, strings.Join(req.Resources, ","), forEntity(req.Entity))
	err = service.Resync(ctx, s, req, *wait, func(p cursor.ResyncProgress) {
		fmt.Fprintf(stdout, "%-8s %-6s %6d entities re-announced, %4d API requests (leader %s)\n", p.State, p.Resource, p.Entities, p.Requests, p.Holder)
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "resync %s done\n", req.Run)
	return err
}

func forEntity(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// resyncRequest checks the flags and makes the request, with a new run id.
func resyncRequest(resources, entity, since string, now time.Time) (cursor.ResyncRequest, error) {
	req := cursor.ResyncRequest{Run: service.NewResyncRun(), Entity: entity}
	var errs []error
	for _, r := range strings.Split(resources, ",") {
		r = strings.TrimSpace(r)
		if !slices.Contains(poll.ResyncResources, r) {
			errs = append(errs, fmt.Errorf("--resources: %q: want users, teams or calls", r))
		} else if !slices.Contains(req.Resources, r) {
			req.Resources = append(req.Resources, r)
		}
	}
	// The leader's order of work, whatever the flag's.
	slices.SortFunc(req.Resources, func(a, b string) int {
		return slices.Index(poll.ResyncResources, a) - slices.Index(poll.ResyncResources, b)
	})
	if entity != "" {
		res, _, err := poll.ParseEntity(entity)
		if err != nil {
			errs = append(errs, fmt.Errorf("--entity: %w", err))
		} else if !slices.Contains(req.Resources, res) {
			req.Resources = []string{res}
		}
	}
	if since != "" {
		if d, err := time.ParseDuration(since); err == nil {
			req.Since = now.Add(-d)
		} else if t, err := parseDate(since); err == nil {
			req.Since = t
		} else {
			errs = append(errs, fmt.Errorf("--since: %w", err))
		}
	}
	return req, errors.Join(errs...)
}
