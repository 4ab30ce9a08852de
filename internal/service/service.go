// Package service assembles callbus: Redis, NATS, the API client, the poller, the
// relay and leadership, with health endpoints and an orderly shutdown. cmd/poller
// and the end-to-end tests run it.
package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Options are what callers add to the service.
type Options struct {
	Version string
	// OnPublished, when set, sees every event the relay got acknowledged (the
	// demo's feed). It must not block.
	OnPublished func(publish.Record)
	// PollHooks observe the poller (tests).
	PollHooks poll.Hooks
	// TracerProvider traces poll cycles, API requests, Redis commits and
	// publishes (nil: no traces; see telemetry.NewTracerProvider).
	TracerProvider trace.TracerProvider
}

// Run runs the service until ctx ends, then shuts down in order: stop polling
// (an interrupted cycle is simply redone: commits are atomic), drain the outbox to
// JetStream, release the lease, stop serving HTTP, drain NATS, close Redis.
func Run(ctx context.Context, s config.Settings, log zerolog.Logger, x Options) error {
	log.Info().Str("version", x.Version).Object("config", s).Msg("starting")
	if x.TracerProvider == nil {
		x.TracerProvider = noop.NewTracerProvider()
	}
	tracer := x.TracerProvider.Tracer("github.com/callbus/callbus")
	metrics, err := telemetry.NewMetrics()
	if err != nil {
		return err
	}
	defer func() { _ = metrics.Shutdown(context.WithoutCancel(ctx)) }()
	rdb, err := connectRedis(s)
	if err != nil {
		return err
	}
	defer rdb.Close()
	rdb.AddHook(redisErrors{metrics})
	nc, err := connectNATS(ctx, s, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := nc.Drain(); err != nil {
			log.Warn().Err(err).Msg("nats drain")
		}
	}()
	// Acks that never come must not pile up: after AckWait the relay gives up on a
	// future and publishes again; the library then forgets it too.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256), jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	store, err := cursor.New(rdb, s.Account)
	if err != nil {
		return err
	}
	if err := checkRedis(ctx, store, log); err != nil {
		return err
	}
	lim, err := callcenter.NewLimiter(callcenter.LimiterConfig{Share: s.RateLimitShare})
	if err != nil {
		return err
	}
	api, err := callcenter.New(s.APIURL, s.APIKey,
		callcenter.WithLimiter(lim),
		callcenter.WithLogger(log.With().Str("component", "api").Logger()),
		callcenter.WithVersion(x.Version),
		callcenter.WithResponseHook(apiObserver(metrics)),
		callcenter.WithHTTPClient(apiHTTPClient(s.APITimeout, x.TracerProvider)))
	if err != nil {
		return err
	}
	relay := publish.NewRelay(js, js, outbox{store}, publish.RelayConfig{
		Stream: s.StreamName,
		Filter: event.AccountFilter(s.SubjectPrefix, s.Account),
	}, log.With().Str("component", "relay").Logger())
	relay.OnPublished = publishObserver(metrics, x.OnPublished)
	relay.OnTruncated = truncationObserver(metrics)
	relay.MaxPayload = nc.MaxPayload
	relay.Tracer = tracer
	if err := observeState(metrics, store, lim, relay); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	poller, err := poll.New(pollConfig(s), api, store, relay.Wake, log.With().Str("component", "poll").Logger(),
		pollObserver(metrics, x.PollHooks, tracer))
	if err != nil {
		return err
	}
	// The holder is unique per process, even when two share an instance id (a
	// host name, a pod restarted in place): only one of them may pass the fence.
	lead := poll.NewLeadership(store, s.InstanceID+"/"+randomSuffix(), s.LeaseTTL, log)
	lead.OnChange = func(leader bool) {
		v := int64(0)
		if leader {
			v = 1
		}
		metrics.Leader.Record(context.WithoutCancel(ctx), v)
	}
	lead.OnChange(false)
	poller.SetAnnounced(publish.NewHistory(js, s.StreamName, event.AccountFilter(s.SubjectPrefix, s.Account)))
	if err := observePoller(metrics, poller); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	stopHTTP, err := serveHTTP(s.HTTPAddr, healthHandler(rdb, lead, poller.Paused, metrics.Handler()), log)
	if err != nil {
		return err
	}
	defer stopHTTP()
	stream := publish.StreamConfig{
		Name: s.StreamName, Prefix: s.SubjectPrefix, MaxAge: s.StreamMaxAge,
		Dupes: s.StreamDuplicates, Replicas: s.StreamReplicas,
	}
	shutdown := ctx
	err = lead.Run(ctx, func(ctx context.Context, lease func() cursor.Lease) error {
		// Set while no relay runs: the previous one ended before work returned.
		relay.Fence = func(ctx context.Context) (time.Duration, error) { return store.Holds(ctx, lease()) }
		rctx, stopRelay := context.WithCancel(ctx)
		relayDone := make(chan struct{})
		go func() {
			defer close(relayDone)
			if ensureStream(rctx, js, stream, log) == nil {
				_ = relay.Run(rctx)
			}
		}()
		err := poller.Run(ctx, lease)
		stopRelay()
		<-relayDone
		if shutdown.Err() != nil { // shutting down (not a lost lease): publish what is committed
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.ShutdownTimeout)
			if derr := relay.Drain(dctx); derr != nil {
				log.Warn().Err(derr).Msg("shutdown: outbox not drained; the next leader publishes the rest")
			}
			cancel()
		}
		return err
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		log.Info().Msg("stopped")
		return nil
	}
	return err
}

// ensureStream provisions the stream, retrying while NATS is away. A stream that
// cannot hold callbus's subjects is an operator's error: it is logged, and events
// wait in the outbox until it is fixed.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg publish.StreamConfig, log zerolog.Logger) error {
	bo := backoff.NewExponentialBackOff()
	bo.MaxInterval = 10 * time.Second
	bo.MaxElapsedTime = 0
	return backoff.RetryNotify(func() error {
		_, notes, err := publish.EnsureStream(ctx, js, cfg)
		for _, n := range notes {
			log.Warn().Str("stream", cfg.Name).Msg("stream settings differ from the configuration: " + n)
		}
		return err
	}, backoff.WithContext(bo, ctx), func(err error, d time.Duration) {
		log.Error().Err(err).Dur("retry_in", d).Msg("stream not ready")
	})
}

// apiHTTPClient traces each request (a child of the poll cycle's span; otelhttp
// records method, URL without credentials — the key travels in a header it does
// not record — and status).
func apiHTTPClient(timeout time.Duration, tp trace.TracerProvider) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(telemetry.Propagator)),
		// The recording download answers 302: report the location, never follow it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// pollConfig maps the settings to the poller's configuration. Discovering new
// calls and refreshing open ones share one list read, so the calls resource runs at
// the shorter of the two intervals.
func pollConfig(s config.Settings) poll.Config {
	iv := map[string]time.Duration{}
	add := func(res string, d time.Duration) {
		if s.Polls(res) {
			iv[res] = d
		}
	}
	add(poll.ResCalls, min(s.CallsInterval, s.OpenCallsInterval))
	add(poll.ResMetrics, s.MetricsInterval)
	add(poll.ResUsers, s.UsersInterval)
	add(poll.ResUserStatuses, s.UserStatusesInterval)
	add(poll.ResTeams, s.TeamsInterval)
	return poll.Config{
		Account: s.Account, Prefix: s.SubjectPrefix, Intervals: iv,
		MetricsLookback: s.MetricsLookback, Backfill: s.CallsBackfill, OutboxMax: s.OutboxMaxEvents,
	}
}

// randomSuffix is a short random hex string.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b[:])
}
