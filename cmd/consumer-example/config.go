package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/callbus/callbus/events"
)

// envPrefix names the environment variable of each flag: --nats-url is
// CONSUMER_NATS_URL. A flag given on the command line wins over the environment.
const envPrefix = "CONSUMER_"

// config is everything the example can be told.
type config struct {
	NATSURL         string
	Stream          string
	Durable         string
	Prefix          string
	Account         string
	Filters         []string // empty: the subjects of the types it applies (see filters)
	RedisURL        string
	DedupTTL        time.Duration
	MaxDeliver      int
	AckWait         time.Duration
	BackOff         []time.Duration // ack waits of the redeliveries
	HandleTimeout   time.Duration
	Workers         int
	DeadLetter      string
	HTTPAddr        string
	LagInterval     time.Duration
	ShutdownTimeout time.Duration
	CrashAt         *crashPoint // nil: never
}

// usageError is a bad flag or value: the binary exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// parseConfig reads flags, then CONSUMER_* variables for the flags not given.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("consumer-example", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.NATSURL, "nats-url", "nats://127.0.0.1:4222", "NATS server URL(s), comma-separated")
	fs.StringVar(&c.Stream, "stream", "CALLCENTER", "JetStream stream of the events")
	fs.StringVar(&c.Durable, "durable", "consumer-example", "durable consumer name (one per downstream service; replicas share it)")
	fs.StringVar(&c.Prefix, "prefix", events.DefaultPrefix, "subject prefix of the events")
	fs.StringVar(&c.Account, "account", events.Any, "account whose events to read (* for every account)")
	fs.Func("filter", "subject filter instead of the applied types' subjects, repeatable or comma-separated", listFlag(&c.Filters))
	fs.StringVar(&c.RedisURL, "redis-url", "redis://127.0.0.1:6379/0", "Redis: the state, the handled-event marks and the claims")
	fs.DurationVar(&c.DedupTTL, "dedup-ttl", 24*time.Hour, "how long a handled event id is remembered: longer than any redelivery or resend")
	fs.IntVar(&c.MaxDeliver, "max-deliver", 5, "deliveries of a message before it is dead-lettered (enforced by the server too)")
	fs.DurationVar(&c.AckWait, "ack-wait", 30*time.Second, "ack wait of the first delivery; work in progress renews it every half")
	fs.Func("backoff", "ack waits of the redeliveries, comma-separated (default 1m,5m,10m,30m): a failed delivery is redelivered after the next one's ack wait, so a failing message is dead-lettered after their sum", durationsFlag(&c.BackOff))
	fs.DurationVar(&c.HandleTimeout, "handle-timeout", 5*time.Minute, "longest time one message may be handled: a hung handler is given up")
	fs.IntVar(&c.Workers, "workers", 4, "messages handled at once; no more are fetched")
	fs.StringVar(&c.DeadLetter, "dead-letter", "callcenter-dlq", "subject prefix of dead-lettered copies: <prefix>.<original subject>")
	fs.StringVar(&c.HTTPAddr, "http-addr", ":8082", "address of GET /state, /healthz and /metrics")
	fs.DurationVar(&c.LagInterval, "lag-interval", 15*time.Second, "how often the consumer's lag is read")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "time allowed on SIGTERM to finish the messages in hand")
	fs.Func("crash-at", "testing only: SIGKILL this process at step received, committed or acked of its n-th message (step:n)", func(s string) error {
		c.CrashAt = &crashPoint{}
		return c.CrashAt.set(s)
	})
	if err := fs.Parse(args); err != nil {
		return c, usageError{err}
	}
	if fs.NArg() > 0 {
		return c, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if err := applyEnv(fs, getenv); err != nil {
		return c, usageError{err}
	}
	if c.BackOff == nil {
		c.BackOff = []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute}
	}
	return c, c.validate()
}

// listFlag appends comma-separated values to *p.
func listFlag(p *[]string) func(string) error {
	return func(s string) error {
		for f := range strings.SplitSeq(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				*p = append(*p, f)
			}
		}
		return nil
	}
}

// durationsFlag sets *p from comma-separated durations.
func durationsFlag(p *[]time.Duration) func(string) error {
	return func(s string) error {
		*p = []time.Duration{}
		for f := range strings.SplitSeq(s, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil {
				return err
			}
			*p = append(*p, d)
		}
		return nil
	}
}

// applyEnv sets each flag not given on the command line from its variable.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		name := envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && !given[f.Name] {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	})
	return errors.Join(errs...)
}

// validate lists every bad value at once.
func (c config) validate() error {
	var errs []error
	if c.Durable == "" || strings.ContainsAny(c.Durable, ".*> \t") {
		errs = append(errs, fmt.Errorf("--durable %q: a name without '.', '*', '>' or spaces", c.Durable))
	}
	if c.DeadLetter == "" || strings.ContainsAny(c.DeadLetter, "*> \t") {
		errs = append(errs, fmt.Errorf("--dead-letter %q: a subject prefix without wildcards", c.DeadLetter))
	}
	if !events.ValidToken(c.Prefix) || (c.Account != events.Any && !events.ValidToken(c.Account)) {
		errs = append(errs, fmt.Errorf("--prefix %q, --account %q: subject tokens (account may be *)", c.Prefix, c.Account))
	}
	if c.MaxDeliver < 1 || c.Workers < 1 {
		errs = append(errs, fmt.Errorf("--max-deliver %d, --workers %d: at least 1", c.MaxDeliver, c.Workers))
	}
	if len(c.BackOff)+1 > c.MaxDeliver {
		errs = append(errs, fmt.Errorf("--backoff: %d ack waits for %d redeliveries (--max-deliver - 1) at most", len(c.BackOff), c.MaxDeliver-1))
	}
	durations := []time.Duration{c.AckWait, c.DedupTTL, c.HandleTimeout, c.LagInterval, c.ShutdownTimeout}
	for _, d := range append(durations, c.BackOff...) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("every duration must be positive, got %s", d))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return usageError{err}
	}
	return nil
}

// ackWaits is the consumer's BackOff: the ack wait of each delivery.
func (c config) ackWaits() []time.Duration {
	return append([]time.Duration{c.AckWait}, c.BackOff...)
}

// filters are the consumer's subject filters: --filter, or the subjects of the
// types the view applies, so that the server does not deliver the others.
func (c config) filters() []string {
	if len(c.Filters) > 0 {
		return c.Filters
	}
	return events.Filters(c.Prefix, c.Account, appliedTypes...)
}
