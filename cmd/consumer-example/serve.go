package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// serve builds each dependency in order, with its teardown right after it, and
// consumes until ctx ends. listening, when set, is told the HTTP address (tests).
// tp traces each delivery as a continuation of the poller's trace (the message's
// traceparent header).
func serve(ctx context.Context, c config, tp trace.TracerProvider, stdout io.Writer, log zerolog.Logger, listening func(addr string)) error {
	nc, err := nats.Connect(c.NATSURL, nats.Name("callbus-consumer-"+c.Durable), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("connect nats: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}

	opt, err := redis.ParseURL(c.RedisURL)
	if err != nil {
		return usageError{fmt.Errorf("--redis-url: %w", err)}
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	cons, err := ensureConsumer(ctx, js, c)
	if err != nil {
		return err
	}
	dlq, created, err := ensureDeadLetterStream(ctx, js, c.Stream, c.DeadLetter)
	if err != nil {
		return err
	}
	log.Info().Str("stream", c.Stream).Strs("filters", c.Filters).Str("dead_letter_stream", dlq).
		Bool("dead_letter_stream_created", created).Msg("consuming")

	v := newView()
	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", c.HTTPAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /state", v)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("http server")
		}
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info().Str("addr", ln.Addr().String()).Msg("serving GET /state")
	if listening != nil {
		listening(ln.Addr().String())
	}

	lagCtx, stopLag := context.WithCancel(ctx)
	defer stopLag()
	go logLag(lagCtx, cons, c.LagInterval, log)

	p := &processor{
		handle:     handler(v, stdout),
		dedup:      newDedup(rdb, c.Durable, c.AckWait, c.DedupTTL),
		dead:       &deadLetters{js: js, prefix: c.DeadLetter},
		maxDeliver: c.MaxDeliver,
		retryDelay: c.RetryDelay,
		log:        log,
		tracer:     tp.Tracer("github.com/callbus/callbus/cmd/consumer-example"),
	}
	if err := consume(ctx, cons, p, c.ShutdownTimeout); err != nil {
		return err
	}
	// Acks and naks are sent; make sure the server has them before closing.
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		log.Warn().Err(err).Msg("flush nats")
	}
	log.Info().Msg("drained; stopped")
	return nil
}
