package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/service"
	"github.com/callbus/callbus/internal/sim"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

const demoKey = "demo-admin-key"

// runDemo is `poller demo`: the simulator, an in-process NATS server with
// JetStream and Redis (CALLBUS_REDIS_URL when reachable, otherwise an in-memory
// Redis-protocol server) in one process, with a live feed of events on stdout.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	speed := fs.Float64("speed", 20, "simulated seconds per real second")
	seed := fs.Uint64("seed", 1, "simulator seed")
	agents := fs.Int("agents", 12, "agents in the simulated call center")
	rate := fs.Float64("call-rate", 4, "calls per simulated minute")
	duration := fs.Duration("duration", 0, "stop after this long (0: until interrupted)")
	verbose := fs.Bool("v", false, "log at debug level")
	if err := fs.Parse(args); err != nil {
		return exitCode{2, err}
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
	log := newLogger(stderr, level, "console")

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

	env := map[string]string{
		"CALLBUS_API_URL": apiURL, "CALLBUS_API_KEY": demoKey, "CALLBUS_ACCOUNT": "demo",
		"CALLBUS_NATS_URL": natsURL, "CALLBUS_REDIS_URL": redisURL, "CALLBUS_HTTP_ADDR": "127.0.0.1:0",
		"CALLBUS_CALLS_INTERVAL_SECONDS": "2", "CALLBUS_OPEN_CALLS_INTERVAL_SECONDS": "2",
		"CALLBUS_METRICS_INTERVAL_SECONDS": "4", "CALLBUS_USERS_INTERVAL_SECONDS": "3",
		"CALLBUS_TEAMS_INTERVAL_SECONDS": "30", "CALLBUS_USER_STATUSES_INTERVAL_SECONDS": "60",
		"CALLBUS_LEASE_TTL_SECONDS": "5", "CALLBUS_INSTANCE_ID": "demo-" + strconv.Itoa(os.Getpid()),
		"CALLBUS_LOG_LEVEL": level, "CALLBUS_LOG_FORMAT": "console",
	}
	s, err := config.Load(func(k string) string { return env[k] }, "")
	if err != nil {
		return fmt.Errorf("demo configuration: %w", err)
	}
	log.Info().Str("api", apiURL).Str("nats", natsURL).Float64("speed", *speed).
		Msg("demo: simulator and NATS running in-process; events follow (Ctrl-C to stop)")
	f := &feed{w: stdout}
	return service.Run(ctx, s, log, service.WithVersion(version), service.WithPublishObserver(func(r publish.Record) { f.print(r.Data) }))
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

// demoRedis returns url when a Redis answers there (after clearing the demo
// account's keys), and otherwise an in-process Redis-protocol server in memory.
func demoRedis(ctx context.Context, url string, log zerolog.Logger) (string, func(), error) {
	if opt, err := redis.ParseURL(url); err == nil {
		rdb := redis.NewClient(opt)
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			n, err := clearAccount(ctx, rdb, "demo")
			_ = rdb.Close()
			if err != nil {
				return "", nil, fmt.Errorf("demo: clear old demo state in %s: %w", opt.Addr, err)
			}
			log.Info().Str("redis", opt.Addr).Int("old_keys_removed", n).Msg("demo: using Redis")
			return url, func() {}, nil
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
