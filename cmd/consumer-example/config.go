package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// envPrefix names the environment variable of each flag: --nats-url is
// CONSUMER_NATS_URL. A flag given on the command line wins over the environment.
const envPrefix = "CONSUMER_"

// config is everything the example can be told.
type config struct {
	NATSURL         string
	Stream          string
	Durable         string
	Filters         []string
	RedisURL        string
	DedupTTL        time.Duration
	MaxDeliver      int
	AckWait         time.Duration
	RetryDelay      time.Duration
	DeadLetter      string
	HTTPAddr        string
	LagInterval     time.Duration
	ShutdownTimeout time.Duration
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
	fs.Func("filter", "subject filter, repeatable or comma-separated (default callcenter.>)", func(s string) error {
		for f := range strings.SplitSeq(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				c.Filters = append(c.Filters, f)
			}
		}
		return nil
	})
	fs.StringVar(&c.RedisURL, "redis-url", "redis://127.0.0.1:6379/0", "Redis for the handled-event marks")
	fs.DurationVar(&c.DedupTTL, "dedup-ttl", 24*time.Hour, "how long a handled event id is remembered: longer than any redelivery or resend")
	fs.IntVar(&c.MaxDeliver, "max-deliver", 5, "deliveries of a failing message before it is dead-lettered")
	fs.DurationVar(&c.AckWait, "ack-wait", 30*time.Second, "time to handle a message before the server redelivers it")
	fs.DurationVar(&c.RetryDelay, "retry-delay", time.Second, "first redelivery delay after a transient error (doubles per attempt, at most 1m)")
	fs.StringVar(&c.DeadLetter, "dead-letter", "callcenter-dlq", "subject prefix of dead-lettered copies: <prefix>.<original subject>")
	fs.StringVar(&c.HTTPAddr, "http-addr", ":8082", "address of GET /state and /healthz")
	fs.DurationVar(&c.LagInterval, "lag-interval", 30*time.Second, "how often to log the consumer's lag")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "time allowed on SIGTERM to finish the messages in hand")
	if err := fs.Parse(args); err != nil {
		return c, usageError{err}
	}
	if fs.NArg() > 0 {
		return c, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if err := applyEnv(fs, getenv); err != nil {
		return c, usageError{err}
	}
	if len(c.Filters) == 0 {
		c.Filters = []string{"callcenter.>"}
	}
	return c, c.validate()
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
	if c.MaxDeliver < 1 {
		errs = append(errs, fmt.Errorf("--max-deliver %d: at least 1", c.MaxDeliver))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--ack-wait", c.AckWait}, {"--dedup-ttl", c.DedupTTL}, {"--retry-delay", c.RetryDelay}, {"--lag-interval", c.LagInterval}, {"--shutdown-timeout", c.ShutdownTimeout}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s %s: must be positive", d.name, d.v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return usageError{err}
	}
	return nil
}
