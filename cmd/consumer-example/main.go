// Command consumer-example is a downstream service of callbus, done right and
// short enough to copy from: it imports only the public events package. It reads
// the events with a durable pull consumer and keeps the live state of every agent
// and open call in Redis, committing each event's change together with its done
// mark, so that a crash at any point loses nothing and applies nothing twice; it
// serves the state at GET /state and prints one line per change. See README.md for
// the guarantees and the failures they were tested against.
//
//	consumer-example --nats-url nats://127.0.0.1:4222 --redis-url redis://127.0.0.1:6379/0 \
//	    --durable agent-board --account acme --http-addr :8082
//	consumer-example replay-dead-letters --nats-url nats://127.0.0.1:4222 --durable agent-board
//
// Every flag can also be set as CONSUMER_<FLAG> (--max-deliver: CONSUMER_MAX_DELIVER).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "consumer-example:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run parses the configuration and serves until ctx ends (SIGINT or SIGTERM), or
// runs the replay-dead-letters command.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "replay-dead-letters" {
		return runReplay(ctx, args[1:], getenv, stdout, stderr)
	}
	c, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log := zerolog.New(stderr).With().Timestamp().Str("service", "consumer-example").Str("durable", c.Durable).Logger()
	// Traces when OTEL_EXPORTER_OTLP_ENDPOINT is set.
	tp, shutdownTraces, err := newTracerProvider(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTraces(context.WithoutCancel(ctx)) }()
	return serve(ctx, c, tp, stdout, log, nil)
}
