// Package service assembles callbus: Redis, NATS, the metrics and the HTTP
// server once per process, and per account served the API client, the store, the
// relay, the poller and leadership, with health endpoints and an orderly
// shutdown (or hand-off of an account to another replica of a fleet).
// It is wiring only: it joins the adapters (the store is the relay's outbox as it
// is), translates what the parts observe into telemetry's instruments, and
// runs the leader's session; it decides nothing about polling, storing or
// publishing. cmd/poller and the end-to-end tests run it; see ARCHITECTURE.md.
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
	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
)

// Run runs the service until ctx ends, then shuts down in order: stop polling
// (an interrupted cycle is simply redone: commits are atomic), drain the outbox to
// JetStream, release the lease, stop serving HTTP, drain NATS, close Redis, stop
// the metrics. Each teardown is deferred right after its constructor.
//
// The process holds the shared parts once (process.go): the metrics provider,
// the Redis client, the NATS connection and the HTTP server. It serves the one
// account of s, or, given WithAccounts (poller run passes the accounts_dir
// watcher), the accounts the fleet assigns to it (fleet.go), each with parts of
// its own (account.go); in a fleet s holds the process's settings only.
func Run(ctx context.Context, s config.Settings, log zerolog.Logger, opts ...Option) error {
	o := newOptions(opts)
	log.Info().Str("version", o.version).Object("config", s).Msg("starting")
	board := newStatusBoard(o.version) // GET /status: keeps the last warnings too
	log = log.Hook(board)
	p, closeProcess, err := openProcess(ctx, s, o, board, log)
	if err != nil {
		return err
	}
	defer closeProcess()
	if o.accounts != nil {
		return p.runFleet(ctx, o.accounts)
	}
	if s.AccountsDir != "" {
		return errors.New("accounts_dir: the accounts come with WithAccounts (poller run watches the directory)")
	}
	return p.runSingle(ctx, s)
}

// runSingle serves the one account of s: HTTP, and the leader session whenever
// this replica holds the account's lease, until ctx ends (or, for poller
// backfill, the backfill does).
func (p *process) runSingle(ctx context.Context, s config.Settings) error {
	store, err := cursor.New(p.rdb, s.Account, cursor.WithOutboxCache(outboxCache))
	if err != nil {
		return err
	}
	if err := checkRedis(ctx, store, redisTarget(s), p.log, p.o.redisAdvice); err != nil {
		return err
	}
	a, err := p.newAccount(ctx, s, store, p.log)
	if err != nil {
		return err
	}
	defer a.close()
	ctx = a.ctx(ctx)
	if p.o.backfill != nil { // poller backfill: this process must lead, and ends when done
		if err := a.session.work.claim(ctx, a.lead.Holder()); err != nil {
			return err
		}
		ctx, a.session.work.finish = context.WithCancel(ctx)
		defer a.session.work.finish()
	}
	stopHTTP, err := p.serve(singleReady(a))
	if err != nil {
		return err
	}
	defer stopHTTP()
	err = a.lead.Run(ctx, a.session.run)
	if p.o.backfill != nil && a.session.work.result != nil {
		return a.session.work.result
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		p.log.Info().Msg("stopped")
		return nil
	}
	return err
}

// parts are what the service made before the leader session: the connections'
// sides it uses, the metrics and the status board.
type parts struct {
	js         jetstream.JetStream
	transport  *http.Transport // to the API, shared by the process's accounts
	maxPayload func() int64    // the NATS server's max_payload (nats.Conn.MaxPayload)
	reconnects func() uint64   // the NATS connection's reconnections (nats.Conn.Stats)
	store      *cursor.Store
	metrics    *telemetry.Metrics
	board      *accountBoard
}

// newLeaderSession builds what the leader runs: the API client, the relay and
// the poller, with their metrics, traces and status.
func newLeaderSession(ctx context.Context, s config.Settings, o options, p parts, log zerolog.Logger) (leaderSession, error) {
	tracer := o.tp.Tracer("github.com/callbus/callbus")
	lim, err := callcenter.NewLimiter(callcenter.LimiterConfig{Share: s.RateLimitShare})
	if err != nil {
		return leaderSession{}, err
	}
	apiLog := log.With().Str("component", "api").Logger() // one: each With allocates 500 bytes
	api, err := callcenter.New(s.APIURL, s.APIKey, append(policyOptions(ctx, s, p.metrics),
		callcenter.WithLimiter(lim),
		callcenter.WithLogger(apiLog),
		callcenter.WithVersion(o.version),
		callcenter.WithoutRaw(), // the poller never reads a listed record's Raw
		callcenter.WithResponseHook(apiObserver(ctx, p.metrics)),
		callcenter.WithRejectionHook(rejectObserver(ctx, p.metrics, apiLog)),
		callcenter.WithHTTPClient(apiHTTPClient(s.APITimeout, o.tp, p.transport)))...)
	if err != nil {
		return leaderSession{}, err
	}
	fence := &leaseFence{store: p.store}
	relay := newRelay(ctx, s, p, fence, p.board.published(o.onPublished), log.With().Str("component", "relay").Logger(),
		publish.WithTracer(tracer))
	if err := p.metrics.ObserveState(stateOf(p.store, lim, relay, s.RateLimitShare)); err != nil {
		return leaderSession{}, fmt.Errorf("metrics: %w", err)
	}
	recordTargets(ctx, p.metrics, pollConfig(s).Intervals)
	p.metrics.WatermarkInterval.Record(ctx, s.WatermarkInterval.Seconds())
	announced := publish.NewHistory(p.js, s.StreamName, events.AccountFilter(s.SubjectPrefix, s.Account))
	pollOpts := append([]poll.Option{poll.WithWake(relay.Wake), poll.WithTracer(tracer), poll.WithAnnounced(announced), poll.WithOps(p.store),
		poll.WithCycleObserver(cycleObserver(p.metrics)), poll.WithIntervalObserver(intervalObserver(p.metrics)),
		poll.WithResync(p.store, s.InstanceID)}, p.board.pollOptions()...)
	poller, err := poll.New(pollConfig(s), api, p.store, log.With().Str("component", "poll").Logger(), append(pollOpts, o.poll...)...)
	if err != nil {
		return leaderSession{}, err
	}
	work, err := newLeaderWork(s, o, p.store, api, p.transport, poller, relay.Wake, announced, log, p.metrics)
	if err != nil {
		return leaderSession{}, err
	}
	rollbacks := func() int64 { return poller.Rollbacks() + work.rollbacks() } // found by either
	if err := p.metrics.ObservePoller(poller.Paused, rollbacks); err != nil {
		return leaderSession{}, fmt.Errorf("metrics: %w", err)
	}
	return leaderSession{
		service: ctx, work: work, relay: relay, fence: fence, lim: lim, js: p.js, drainTimeout: s.ShutdownTimeout, log: log,
		stream: streamConfig(s),
	}, nil
}

// streamConfig is the stream the settings ask for.
func streamConfig(s config.Settings) publish.StreamConfig {
	return publish.StreamConfig{
		Name: s.StreamName, Prefix: s.SubjectPrefix, MaxAge: s.StreamMaxAge,
		Dupes: s.StreamDuplicates, Replicas: s.StreamReplicas,
	}
}

// apiHTTPClient traces each request (a child of the poll cycle's span; otelhttp
// records method, URL without credentials — the key travels in a header it does
// not record — and status).
func apiHTTPClient(timeout time.Duration, tp trace.TracerProvider, base http.RoundTripper) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(telemetry.Propagator)),
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
		IntervalFloor: s.PollIntervalFloor, EventVersions: event.VersionChoice(s.EventVersions), Policy: s.DataPolicy,
		WatermarkInterval: s.WatermarkInterval,
	}
}

// randomSuffix is a short random hex string.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b[:])
}

// outboxCache is how many of its own newest commits' entries an account's store
// keeps for the relay (cursor.WithOutboxCache): the relay reads them from memory
// instead of from Redis while it keeps up, as it does but for a few batches.
const outboxCache = 2 * cursor.RecommendedMaxEvents

// relayIdle is how often an account's relay looks at its outbox when nothing
// woke it. Every commit of the account's poller wakes it at once, and only the
// poller commits events while it leads, so this only bounds the wait for what
// nothing announces: an entry committed under an earlier term and left behind,
// or a NATS reconnection after which the relay checks the stream for what it
// lost (well within the acknowledged entries' retention, 3 minutes). Each look
// costs an outbox read in Redis: at the relay's default (250 ms) a replica of
// thousands of mostly idle accounts paid thousands a second, and at 2 s they
// were still a tenth of such a replica's CPU (docs/performance.md, Fleet).
const relayIdle = 10 * time.Second

// newRelay is an account's relay, the same for its leader's session and for the
// drain of a retired account: one place for its options, so the two never differ.
func newRelay(ctx context.Context, s config.Settings, p parts, fence *leaseFence, published func([]publish.Published),
	log zerolog.Logger, opts ...publish.RelayOption) *publish.Relay {
	// The store is the relay's outbox as it is: both speak of event.Committed.
	return publish.NewRelay(p.js.Conn(), p.js, p.store, publish.RelayConfig{
		Stream: s.StreamName,
		Filter: events.AccountFilter(s.SubjectPrefix, s.Account),
		Idle:   relayIdle,
	}, log, append([]publish.RelayOption{
		publish.WithPublishObserver(publishObserver(ctx, p.metrics, published)),
		publish.WithTruncationObserver(truncationObserver(ctx, p.metrics)),
		publish.WithMaxPayload(p.maxPayload), publish.WithReconnects(p.reconnects), publish.WithFence(fence.holds),
	}, opts...)...)
}
