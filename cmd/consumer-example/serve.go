package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
	log.Info().Str("stream", c.Stream).Strs("filters", c.filters()).Str("dead_letter_stream", dlq).
		Bool("dead_letter_stream_created", created).Msg("consuming")

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := newMetrics(reg)
	st := newStore(rdb, c.Durable, c.DedupTTL)
	stopHTTP, err := startHTTP(ctx, c.HTTPAddr, routes(st, reg, nc, rdb), log, listening)
	if err != nil {
		return err
	}
	defer stopHTTP()

	lagCtx, stopLag := context.WithCancel(ctx)
	defer stopLag()
	go m.watchLag(lagCtx, cons, c.LagInterval, log)
	dead := &deadLetters{js: js, prefix: c.DeadLetter}
	sub, err := watchMaxDeliveries(ctx, nc, js, dead, m, c.Stream, c.Durable, log)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()

	p := newProcessor(c, st, dead, m, stdout, log, tp)
	if err := consume(ctx, cons, p, c.Workers, c.ShutdownTimeout, log); err != nil {
		return err
	}
	// Acks and naks are sent; make sure the server has them before closing.
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		log.Warn().Err(err).Msg("flush nats")
	}
	log.Info().Msg("drained; stopped")
	return nil
}

func newProcessor(c config, st *store, dead *deadLetters, m *metrics, out io.Writer, log zerolog.Logger, tp trace.TracerProvider) *processor {
	return &processor{
		commit:        st.commit,
		claims:        &claims{store: st, ttl: claimTTL(c.AckWait)},
		dead:          dead,
		metrics:       m,
		maxDeliver:    c.MaxDeliver,
		ackWaits:      c.ackWaits(),
		heartbeat:     c.AckWait / 2,
		handleTimeout: c.HandleTimeout,
		replica:       replicaName(),
		crash:         c.CrashAt,
		log:           log,
		tracer:        tp.Tracer("github.com/callbus/callbus/cmd/consumer-example"),
		out:           out,
	}
}

// replicaName names this process in its claims: host, pid and a random suffix.
func replicaName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// routes: GET /state (the view), /healthz (NATS and Redis reachable), /metrics.
func routes(st *store, reg *prometheus.Registry, nc *nats.Conn, rdb *redis.Client) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /state", st)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		var problems []error
		if !nc.IsConnected() {
			problems = append(problems, fmt.Errorf("nats: %s", nc.Status()))
		}
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		if err := rdb.Ping(ctx).Err(); err != nil {
			problems = append(problems, fmt.Errorf("redis: %w", err))
		}
		if err := errors.Join(problems...); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// startHTTP serves h on addr until the returned stop is called.
func startHTTP(ctx context.Context, addr string, h http.Handler, log zerolog.Logger, listening func(string)) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("http server")
		}
	}()
	log.Info().Str("addr", ln.Addr().String()).Msg("serving GET /state, /healthz, /metrics")
	if listening != nil {
		listening(ln.Addr().String())
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}
