package service

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// process is what one poller process holds once, whatever the number of
// accounts it serves: the settings of the process, the metrics provider, one
// Redis client (a node, a Cluster or Sentinel's primary), one NATS connection
// (a server list) with one JetStream context on it, one HTTP transport to the
// APIs (shared.go), the status board and, once serving, the HTTP server.
type process struct {
	s       config.Settings
	o       options
	log     zerolog.Logger
	holder  string // the lease holder name of every account here; the fleet member name
	metrics *telemetry.Metrics
	rdb     redis.UniversalClient
	nc      *nats.Conn
	js      jetstream.JetStream // every account's relay publishes through it
	api     *apiTransports      // every account's API client and backfill request through it
	board   *statusBoard
	// draining counts the retired accounts whose outbox this replica publishes
	// now (drainAccount): callbus_fleet_accounts_draining.
	draining atomic.Int64
}

// openProcess opens the shared parts; close tears them down in reverse order
// (drain NATS, close Redis, stop the metrics). Neither Redis nor NATS must be up:
// their clients retry.
func openProcess(ctx context.Context, s config.Settings, o options, board *statusBoard, log zerolog.Logger) (p *process, close func(), err error) {
	var closers []func()
	close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			close()
		}
	}()
	metrics, err := telemetry.NewMetrics()
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { _ = metrics.Shutdown(context.WithoutCancel(ctx)) })
	rdb, err := connectRedis(s)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { _ = rdb.Close() })
	rdb.AddHook(redisErrors{metrics})
	nc, err := connectNATS(ctx, s, log)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() { drainNATS(nc, log) })
	js, err := jetStream(nc)
	if err != nil {
		return nil, nil, err
	}
	api := &apiTransports{}
	closers = append(closers, api.closeIdle)
	board.secrets.add(s.NATSPassword, s.RedisPassword, s.RedisSentinelPassword)
	// The holder is unique per process, even when two share an instance id (a
	// host name, a pod restarted in place): only one of them may pass the fence.
	holder := s.InstanceID + "/" + randomSuffix()
	board.setInstance(holder)
	return &process{s: s, o: o, log: log, holder: holder, metrics: metrics, rdb: rdb, nc: nc, js: js, api: api, board: board}, close, nil
}

// serve serves /healthz, /readyz (Redis answers, and ready says the rest),
// /metrics, /status and, when asked, /debug/pprof/ until stop is called.
func (p *process) serve(ready readiness) (stop func(), err error) {
	var h http.Handler = healthHandler(p.rdb, ready, p.metrics.Handler())
	return serveHTTP(p.s.HTTPAddr, withPprof(p.s.DebugPprof, p.board.routes(h)), p.log)
}

// reconnects counts the NATS connection's reconnections: a relay checks the
// stream for lost acknowledged writes after each (publish.WithReconnects).
func (p *process) reconnects() uint64 { return p.nc.Stats().Reconnects }
