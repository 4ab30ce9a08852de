//go:build !nodemo

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/sim"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

const (
	demoKey     = "demo-admin-key"
	demoAccount = "demo"
)

const demoUsage = `usage: poller demo [flags]

Runs the simulated call center, an in-process NATS server with JetStream and the
poller in one process, and prints each published event as a line on stdout, with
the simulator's clock (simulated time, running --speed times faster than real
time). Redis: CALLBUS_REDIS_URL when a server answers there (the demo's keys,
callbus:{demo}:*, are removed at start and on exit), otherwise an in-memory one.
`

// runDemo is ` + "`poller demo`" + `: the simulator, an in-process NATS server with
// JetStream and Redis (CALLBUS_REDIS_URL when reachable, otherwise an in-process
// Redis-protocol server in memory) in one process, with a live feed of events on
// stdout. It removes its keys from a real Redis on exit.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", demoUsage, stderr)
	speed := fs.Float64("speed", 20, "simulated seconds per real second")
	seed := fs.Uint64("seed", 1, "simulator seed")
	agents := fs.Int("agents", 12, "agents in the simulated call center")
	rate := fs.Float64("call-rate", 4, "calls per simulated minute")
	duration := fs.Duration("duration", 0, "stop after this long (0: until interrupted)")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	level := "info"
	if *verbose {
		level = "debug"
	}
	// The configuration is the demo's own, not the user's: the start-up line
	// leaves it out.
	log := newLogger(stderr, level, "console", "config")
	service.RouteDriverLogs(log)

	simulator, err := sim.New(sim.Config{Seed: *seed, Speed: *speed, Agents: *agents, CallRate: *rate, APIKey: demoKey, Plan: 400})
	if err != nil {
		return err
	}
	defer simulator.Close()
	apiURL, stopAPI, err := listenLocal(simulator.Handler())
	if err != nil {
		return err
	}
	defer stopAPI()
	natsURL, stopNATS, err := startNATS()
	if err != nil {
		return err
	}
	defer stopNATS()
	redisURL, stopRedis, err := demoRedis(ctx, config.EnvOrDefault(getenv, "redis_url"), log)
	if err != nil {
		return err
	}
	defer stopRedis()
	s, err := config.Load(demoEnv(apiURL, natsURL, redisURL, level), "")
	if err != nil {
		return fmt.Errorf("demo configuration: %w", err)
	}
	log.Info().Str("api", apiURL).Str("nats", natsURL).Float64("speed", *speed).
		Msg("demo: simulator and NATS running in-process; events follow (Ctrl-C to stop)")
	// The service logs warnings and errors only (all with -v): its start-up lines
	// would come between the table's header and the first events. The demo's Redis
	// keeps nothing worth persisting, so the advice to persist it stays quiet.
	svcLog := log.Level(zerolog.WarnLevel)
	if *verbose {
		svcLog = log
	}
	f := &feed{w: stdout, clock: simulator.Now}
	f.header(*speed)
	return service.Run(ctx, s, svcLog, service.WithVersion(version), service.WithRedisAdvice(zerolog.InfoLevel),
		service.WithPublishObserver(func(r event.Committed) { f.print(r.Data) }))
}

// demoEnv is the demo's configuration: short poll intervals, the in-process
// servers, console logs.
func demoEnv(apiURL, natsURL, redisURL, level string) func(string) string {
	env := map[string]string{
		"CALLBUS_API_URL": apiURL, "CALLBUS_API_KEY": demoKey, "CALLBUS_ACCOUNT": demoAccount,
		"CALLBUS_NATS_URL": natsURL, "CALLBUS_REDIS_URL": redisURL, "CALLBUS_HTTP_ADDR": "127.0.0.1:0",
		"CALLBUS_CALLS_INTERVAL_SECONDS": "2", "CALLBUS_OPEN_CALLS_INTERVAL_SECONDS": "2",
		"CALLBUS_METRICS_INTERVAL_SECONDS": "4", "CALLBUS_USERS_INTERVAL_SECONDS": "3",
		"CALLBUS_TEAMS_INTERVAL_SECONDS": "30", "CALLBUS_USER_STATUSES_INTERVAL_SECONDS": "60",
		"CALLBUS_LEASE_TTL_SECONDS": "5", "CALLBUS_INSTANCE_ID": "demo-" + strconv.Itoa(os.Getpid()),
		"CALLBUS_LOG_LEVEL": level, "CALLBUS_LOG_FORMAT": "console",
	}
	return func(k string) string { return env[k] }
}

// listenLocal serves h on a free loopback port.
func listenLocal(h http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

// startNATS runs a JetStream-enabled nats-server in-process on a free port.
func startNATS() (string, func(), error) {
	dir, err := os.MkdirTemp("", "callbus-demo-nats-")
	if err != nil {
		return "", nil, err
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		return "", nil, fmt.Errorf("nats-server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		return "", nil, errors.New("nats-server did not start")
	}
	return ns.ClientURL(), func() { ns.Shutdown(); ns.WaitForShutdown(); _ = os.RemoveAll(dir) }, nil
}

// demoRedis returns url when a Redis answers there, after removing the demo
// account's keys, and a stop function that removes them again; otherwise an
// in-process Redis-protocol server in memory. A plain TCP dial probes first, so
// that an absent server costs no go-redis dial retries.
func demoRedis(ctx context.Context, url string, log zerolog.Logger) (string, func(), error) {
	if opt, err := redis.ParseURL(url); err == nil && reachable(ctx, opt.Addr) {
		opt.MaxRetries = -1
		rdb := redis.NewClient(opt)
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			n, err := clearAccount(ctx, rdb, demoAccount)
			if err != nil {
				_ = rdb.Close()
				return "", nil, fmt.Errorf("demo: clear old demo state in %s: %w", opt.Addr, err)
			}
			log.Info().Str("redis", opt.Addr).Int("db", opt.DB).Int("old_keys_removed", n).
				Msgf("demo: using Redis; its keys (callbus:{%s}:*) are removed on exit", demoAccount)
			return url, func() { clearOnExit(ctx, rdb, log) }, nil
		}
		_ = rdb.Close()
	}
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return "", nil, fmt.Errorf("in-memory redis: %w", err)
	}
	log.Warn().Msg("demo: no Redis reachable (set CALLBUS_REDIS_URL); using an in-process, in-memory Redis: state is lost on exit")
	return "redis://" + m.Addr() + "/0", m.Close, nil
}

// reachable reports whether a TCP connection to addr opens within a second.
func reachable(ctx context.Context, addr string) bool {
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// clearOnExit removes the demo's keys once the service has stopped (ctx is done
// by then: the removal has its own time limit) and closes rdb.
func clearOnExit(ctx context.Context, rdb *redis.Client, log zerolog.Logger) {
	defer rdb.Close()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	n, err := clearAccount(cctx, rdb, demoAccount)
	if err != nil {
		log.Warn().Err(err).Msgf("demo: could not remove every key callbus:{%s}:*", demoAccount)
		return
	}
	log.Info().Int("keys_removed", n).Msg("demo: its Redis keys removed")
}

// clearAccount deletes the keys of an account, so a demo starts from nothing.
func clearAccount(ctx context.Context, rdb *redis.Client, account string) (int, error) {
	n := 0
	iter := rdb.Scan(ctx, 0, "callbus:{"+account+"}:*", 500).Iterator()
	for iter.Next(ctx) {
		if err := rdb.Del(ctx, iter.Val()).Err(); err != nil {
			return n, err
		}
		n++
	}
	return n, iter.Err()
}
