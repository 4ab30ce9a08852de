package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/events"
)

// replayOptions is what `poller replay` and `poller tail` read, and where.
type replayOptions struct {
	natsURL  string
	stream   string
	since    time.Time // zero: from the first message (or fromSeq)
	fromSeq  uint64    // 0: not set
	until    time.Time // zero: no time bound
	subjects []string  // NATS subject filters; none: the whole stream
	types    map[events.Type]bool
	pretty   bool
	to       string // republish under this first subject token
	follow   bool
	fromNow  bool   // tail: only messages stored from now on
	entity   string // only this entity's events and its sub-entities' (calls/812/...)
}

const replayUsage = `usage: poller replay [flags]

Reads the stream with an ordered consumer and prints each event's CloudEvents JSON
on one line (NDJSON), from the first message or --since/--from-seq, up to the last
message stored when it started (or --until), then exits; --follow keeps printing
new events until interrupted. An empty range prints nothing and exits 0.
Times are the stream's storage times. A DURATION counts back from now: --since 2h.

--entity calls/812 prints the whole history of one entity (the CloudEvents subject),
every event type, in stream order: the call's participants and metric included.
With --pretty each line shows the gap since the entity's previous event (by the
events' own times); the JSON lines are the events as stored.
`

// runReplay is `poller replay`.
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseReplay(args, getenv, stdout, stderr, time.Now())
	if err != nil {
		return err
	}
	return replay(ctx, o, getenv, stdout, stderr)
}

// runTail is `poller tail`: replay from now with --follow --pretty.
func runTail(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("tail", "usage: poller tail [flags]\n\nPrints new events as readable lines until interrupted.\n", stderr)
	o := replayOptions{follow: true, pretty: true, fromNow: true}
	commonReplayFlags(fs, &o, getenv)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return exitCode{2, err}
	}
	return replay(ctx, o, getenv, stdout, stderr)
}

// parseReplay reads the flags of `poller replay`; now anchors relative times.
func parseReplay(args []string, getenv func(string) string, stdout, stderr io.Writer, now time.Time) (replayOptions, error) {
	var o replayOptions
	var since, until string
	fs := newFlags("replay", replayUsage, stderr)
	commonReplayFlags(fs, &o, getenv)
	fs.StringVar(&since, "since", "", "start at this `DURATION|TIME`: 90m ago, or an RFC 3339 time")
	fs.Uint64Var(&o.fromSeq, "from-seq", 0, "start at this stream sequence `N`")
	fs.StringVar(&until, "until", "", "stop after this `DURATION|TIME`: 30m ago, or an RFC 3339 time")
	fs.BoolVar(&o.pretty, "pretty", false, "readable lines (time, type, entity, change) instead of JSON")
	fs.StringVar(&o.to, "to", "", "republish each event with its first subject token replaced by `PREFIX` (e.g. callcenter-replay); prints nothing unless --pretty")
	fs.BoolVar(&o.follow, "follow", false, "keep going with new events until interrupted")
	if err := parseFlags(fs, args, stdout); err != nil {
		return o, err
	}
	var errs []error
	var err error
	if since != "" {
		if o.since, err = parseReplayTime(since, now); err != nil {
			errs = append(errs, fmt.Errorf("--since: %w", err))
		}
	}
	if until != "" {
		if o.until, err = parseReplayTime(until, now); err != nil {
			errs = append(errs, fmt.Errorf("--until: %w", err))
		}
	}
	if since != "" && o.fromSeq > 0 {
		errs = append(errs, errors.New("--since and --from-seq: give one starting point"))
	}
	if !o.since.IsZero() && !o.until.IsZero() && o.until.Before(o.since) {
		errs = append(errs, fmt.Errorf("--until %s is before --since %s", o.until.Format(time.RFC3339), o.since.Format(time.RFC3339)))
	}
	if o.to != "" && !events.ValidToken(o.to) {
		errs = append(errs, fmt.Errorf("--to %q: one subject token (letters, digits, '-' or '_')", o.to))
	}
	errs = append(errs, o.validate())
	if err := errors.Join(errs...); err != nil {
		return o, exitCode{2, err}
	}
	return o, nil
}

// commonReplayFlags are the flags replay and tail share.
func commonReplayFlags(fs *flag.FlagSet, o *replayOptions, getenv func(string) string) {
	fs.StringVar(&o.natsURL, "nats-url", config.EnvOrDefault(getenv, "nats_url"), "NATS server URL(s) (CALLBUS_NATS_URL; credentials from CALLBUS_NATS_CREDS, _USER, _PASSWORD, _TLS_CA)")
	fs.StringVar(&o.stream, "stream", config.EnvOrDefault(getenv, "stream_name"), "stream to read (CALLBUS_STREAM_NAME)")
	fs.Func("subject", "only subjects matching this NATS `FILTER`, e.g. 'callcenter.acme.>' or '*.*.call.*' (repeatable)", func(s string) error {
		o.subjects = append(o.subjects, s)
		return nil
	})
	fs.StringVar(&o.entity, "entity", "", "only the history of this `ENTITY` (the CloudEvents subject, e.g. calls/812, users/8, teams/2), its sub-entities included")
	fs.Func("type", "only events of this CloudEvents `TYPE`, e.g. call.created (repeatable or comma-separated)", func(s string) error {
		if o.types == nil {
			o.types = map[events.Type]bool{}
		}
		for t := range strings.SplitSeq(s, ",") {
			if t = strings.TrimSpace(t); t != "" {
				o.types[events.Type(t)] = true
			}
		}
		return nil
	})
}

// validate checks the filters shared by replay and tail.
func (o replayOptions) validate() error {
	var errs []error
	for _, s := range o.subjects {
		if !validSubject(s) {
			errs = append(errs, fmt.Errorf("--subject %q: not a NATS subject filter", s))
		}
	}
	if o.entity != "" && !validEntity(o.entity) {
		errs = append(errs, fmt.Errorf("--entity %q: want calls/ID, users/ID or teams/ID (a subject such as calls/812/participants/4431 too)", o.entity))
	}
	for t := range o.types {
		if !events.Known(t) {
			errs = append(errs, fmt.Errorf("--type %q: not an event type (%s)", t, replayTypeList()))
		}
	}
	return errors.Join(errs...)
}

// parseReplayTime reads a duration back from now ("90m") or an RFC 3339 time.
func parseReplayTime(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a duration counts back from now, give it without a sign", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want a duration such as 90m or an RFC 3339 time such as 2026-11-21T10:00:00Z", s)
	}
	return t, nil
}

func replayTypeList() string {
	var s []string
	for _, i := range events.Catalog {
		s = append(s, string(i.Type))
	}
	return strings.Join(s, ", ")
}
