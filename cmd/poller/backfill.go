package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/backfill"
	"github.com/callbus/callbus/internal/service"
	"github.com/rs/zerolog"
)

// runBackfill is `poller backfill`: the account's history through the export.
func runBackfill(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("backfill", "usage: poller backfill --since D|T [--until D|T] [--resources calls,call_metrics,users,teams] [flags]\n\n"+
		"Announces the account's history through the account export: the same events and ids as live polling,\n"+
		"marked callbushistory. Resumable: run it again after a crash.\n", stderr)
	file := fs.String("config", "", "JSON values `FILE`, as the setup page saves it (see poller config docs)")
	since := fs.String("since", "", "oldest calls to announce: a date (2024-01-31) or date-time (RFC 3339); required")
	until := fs.String("until", "", "newest calls to announce (default: now)")
	resources := fs.String("resources", "calls,call_metrics", "what to backfill: calls, call_metrics, users, teams (comma-separated)")
	dir := fs.String("dir", "", "where the report is kept while it is read (default: the temporary directory)")
	progress := fs.String("progress", "auto", "line (a progress line), log (JSON lines every 5 s) or auto (line on a terminal)")
	asJSON := fs.Bool("json", false, "progress as JSON lines on stdout every 5 s (fields: docs/operator-tools.md#machine-readable-output)")
	httpAddr := fs.String("http-addr", "127.0.0.1:0", "address of /healthz and /metrics while the backfill runs")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	req, err := backfillRequest(*since, *until, *resources, time.Now())
	if err != nil {
		return exitCode{2, err}
	}
	s, err := config.Load(getenv, *file)
	if err != nil {
		if config.IsInvalid(err) {
			return exitCode{2, fmt.Errorf("invalid configuration:\n%w", err)}
		}
		return err
	}
	s.HTTPAddr = *httpAddr
	log := newLogger(stderr, s.LogLevel, s.LogFormat)
	var term io.Writer
	if *progress == "line" || (*progress == "auto" && isTerminal(stderr)) {
		term = stderr
	}
	plog := log
	if *asJSON {
		term, plog = nil, zerolog.New(stdout).With().Timestamp().Logger()
	}
	opts := service.BackfillOptions{Request: req, Dir: *dir, Progress: backfill.NewProgress(term, plog, 5*time.Second)}
	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); opts.Progress.Run(pctx) }()
	err = service.Run(ctx, s, log, service.WithVersion(version), service.WithBackfill(opts))
	stop()
	<-done
	return err
}

// backfillRequest parses the flags of poller backfill.
func backfillRequest(since, until, resources string, now time.Time) (backfill.Request, error) {
	var errs []error
	req := backfill.Request{Until: now.UTC().Truncate(time.Second), Resources: strings.Split(resources, ",")}
	if since == "" {
		errs = append(errs, errors.New("--since: required"))
	} else if t, err := parseDate(since); err != nil {
		errs = append(errs, fmt.Errorf("--since: %w", err))
	} else {
		req.Since = t
	}
	if until != "" {
		t, err := parseDate(until)
		if err != nil {
			errs = append(errs, fmt.Errorf("--until: %w", err))
		}
		req.Until = t
	}
	if len(errs) == 0 {
		errs = append(errs, req.Check())
	}
	return req, errors.Join(errs...)
}

// parseDate reads a date (midnight UTC) or an RFC 3339 date-time.
func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want 2006-01-02 or an RFC 3339 date-time", s)
	}
	return t.UTC(), nil
}
