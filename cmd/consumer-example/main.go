// Command consumer-example is a downstream service of callbus, done right and
// short enough to copy from. It reads the events with a durable pull consumer,
// acknowledges each explicitly, handles each event id once (Redis marks, see
// dedup.go), retries transient failures with a delay, dead-letters what it cannot
// handle, and drains on SIGTERM. What it does with the events: it keeps the live
// state of every agent and open call, serves it at GET /state and prints one line
// per change.
//
//	consumer-example --nats-url nats://127.0.0.1:4222 --redis-url redis://127.0.0.1:6379/0 \
//	    --durable agent-board --filter 'callcenter.acme.>' --http-addr :8082
//
// Every flag can also be set as CONSUMER_<FLAG> (--max-deliver: CONSUMER_MAX_DELIVER).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/callbus/callbus/internal/telemetry"
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

// run parses the configuration and serves until ctx ends (SIGINT or SIGTERM).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := parseConfig(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log := zerolog.New(stderr).With().Timestamp().Str("service", "consumer-example").Str("durable", c.Durable).Logger()
	// Traces when OTEL_EXPORTER_OTLP_ENDPOINT is set.
	tp, shutdownTraces, err := telemetry.NewTracerProvider(ctx, getenv, "example")
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTraces(context.WithoutCancel(ctx)) }()
	return serve(ctx, c, tp, stdout, log, nil)
}
