package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The process tests and end-to-end benchmarks run the real poller binary as
// child processes (so they can kill it) on one kind of bed: Redis, NATS, the
// simulator, and an environment pointing the poller at them. This file is that
// bed, for one account (bed) and for the fleet's accounts_dir (writeAccount,
// fleetEnv; fleetBed adds clusters).

const procKey = "proc-test-key-93a1f7"

// bed is a process test's engines, a redis-server and an in-process NATS
// server, and for a single-account test its world and the account's store.
type bed struct {
	redis *redistest.Server
	nats  *natstest.Server
	world *simtest.World // nil from startEngines: the test brings its accounts
	store *cursor.Store  // acme's, beside world
}

// startEngines starts Redis with startRedis (redistest.Start, or StartDurable for
// a test that restarts it under the poller) and NATS.
func startEngines(t testing.TB, startRedis func(testing.TB) *redistest.Server) *bed {
	t.Helper()
	return &bed{redis: startRedis(t), nats: natstest.Start(t)}
}

// startBed is startEngines with the account acme: a world from cfg whose clock
// moves at speed (see startWorldWith), and the account's store.
func startBed(t testing.TB, startRedis func(testing.TB) *redistest.Server, speed float64, cfg sim.Config) *bed {
	t.Helper()
	b := startEngines(t, startRedis)
	b.world = startWorldWith(t, speed, cfg)
	s, err := cursor.New(b.redis.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	b.store = s
	return b
}

// env is the environment of a poller of acme named instance serving HTTP at addr.
func (b *bed) env(instance, addr string) []string {
	return pollerEnv(b.world, b.nats.URL(), b.redis.URL, instance, addr)
}

// fleetEnv is the environment of a fleet member with the accounts of dir.
func (b *bed) fleetEnv(instance, addr, dir string) []string {
	return fleetEnv(b.nats.URL(), b.redis.URL, instance, addr, dir)
}

// stream is a JetStream context on the bed's NATS.
func (b *bed) stream(t testing.TB) jetstream.JetStream { return jetStream(t, b.nats.Conn(t)) }

// usualWorld is the tests' usual world (seed 11, 12 agents, 4 calls a minute)
// with backlog ended calls.
func usualWorld(backlog int) sim.Config {
	return sim.Config{Seed: 11, Agents: 12, CallRate: 4, Backlog: backlog}
}

// startWorld starts the usual world; see startWorldWith.
func startWorld(t testing.TB, speed float64, backlog int) *simtest.World {
	t.Helper()
	return startWorldWith(t, speed, usualWorld(backlog))
}

// startWorldWith starts a world from cfg with the test's API key. Its clock, unless
// cfg brings one, moves at speed × real time until frozen (0: frozen from the start).
func startWorldWith(t testing.TB, speed float64, cfg sim.Config) *simtest.World {
	t.Helper()
	cfg.APIKey = procKey
	w := simtest.NewWorld(t, cfg)
	if speed > 0 && w.Clock != nil {
		w.Run(t, speed)
	}
	return w
}

// hostEnv is the test's environment without CALLBUS_ settings: where a child's
// environment starts.
func hostEnv() []string { return without(os.Environ(), "CALLBUS_*") }

// without is env less the settings whose name matches one of patterns
// (path.Match: "CALLBUS_*_INTERVAL_SECONDS").
func without(env []string, patterns ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(patterns, func(p string) bool { ok, _ := path.Match(p, name); return ok }) {
			out = append(out, kv)
		}
	}
	return out
}

// configDefaults is env less the settings a benchmark of live traffic leaves to
// the configuration's defaults, as in production: the intervals, the rate-limit
// share and the settings named in more.
func configDefaults(env []string, more ...string) []string {
	return without(env, append([]string{"CALLBUS_*_INTERVAL_SECONDS", "CALLBUS_RATE_LIMIT_SHARE"}, more...)...)
}

// pollerEnv is the child's environment: the test's, without CALLBUS_ settings,
// plus these.
func pollerEnv(w *simtest.World, natsURL, redisURL, instance, httpAddr string) []string {
	return append(hostEnv(),
		"CALLBUS_API_URL="+w.URL, "CALLBUS_API_KEY="+procKey, "CALLBUS_ACCOUNT=acme",
		"CALLBUS_NATS_URL="+natsURL, "CALLBUS_REDIS_URL="+redisURL, "CALLBUS_HTTP_ADDR="+httpAddr,
		"CALLBUS_INSTANCE_ID="+instance, "CALLBUS_LEASE_TTL_SECONDS=3",
		"CALLBUS_CALLS_INTERVAL_SECONDS=1", "CALLBUS_OPEN_CALLS_INTERVAL_SECONDS=1",
		"CALLBUS_METRICS_INTERVAL_SECONDS=1", "CALLBUS_USERS_INTERVAL_SECONDS=1",
		"CALLBUS_TEAMS_INTERVAL_SECONDS=1", "CALLBUS_USER_STATUSES_INTERVAL_SECONDS=5",
		"CALLBUS_RATE_LIMIT_SHARE=100", "CALLBUS_SHUTDOWN_TIMEOUT_SECONDS=5", "CALLBUS_LOG_LEVEL=info",
	)
}

// fleetEnv is a fleet member's environment: pollerEnv's process settings, the
// accounts from dir.
func fleetEnv(natsURL, redisURL, instance, httpAddr, dir string) []string {
	env := without(pollerEnv(&simtest.World{}, natsURL, redisURL, instance, httpAddr), "CALLBUS_API_URL", "CALLBUS_API_KEY", "CALLBUS_ACCOUNT")
	return append(env, "CALLBUS_ACCOUNTS_DIR="+dir)
}

// writeAccount writes an account of an accounts_dir: dir/name.json (api_url,
// api_key_file) and dir/name.key holding key.
func writeAccount(t testing.TB, dir, name, apiURL, key string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"api_url": apiURL, "api_key_file": name + ".key"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), body, 0o600); err != nil {
		t.Fatal(err)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// pollerBinary builds this command once per test binary, as the container image
// does (-tags nodemo: no demo, no in-process servers), so that the process tests
// and the benchmarks run and measure the binary that is deployed.
func pollerBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "callbus-poller-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "poller")
		out, err := exec.Command("go", "build", "-tags", "nodemo", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// child is a poller process the test started.
type child struct {
	cmd    *exec.Cmd
	stderr *simtest.Buffer
	exited chan error
}

// startCommand starts the poller binary with args; it is killed when the test ends.
func startCommand(t testing.TB, env []string, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(pollerBinary(t), args...), stderr: &simtest.Buffer{}, exited: make(chan error, 1)}
	c.cmd.Env = env
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() { c.kill(t) })
	return c
}

// startPoller starts `poller run`; it is killed when the test ends, and the API
// key may not appear in its output.
func startPoller(t testing.TB, env []string) *child {
	t.Helper()
	c := startCommand(t, env, "run")
	t.Cleanup(func() {
		c.kill(t) // first, so that the whole output is in
		if strings.Contains(c.stderr.String(), procKey) {
			t.Errorf("the API key appears in the poller's output")
		}
	})
	return c
}

func (c *child) signal(sig syscall.Signal) {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}

// wait returns a channel that yields the exit error, once.
func (c *child) wait(limit time.Duration) <-chan error {
	out := make(chan error, 1)
	go func() {
		select {
		case err := <-c.exited:
			c.exited <- err // keep it for the next caller
			out <- err
		case <-time.After(limit):
			out <- fmt.Errorf("still running after %s", limit)
		}
	}()
	return out
}

// terminate sends SIGTERM and returns how the process exited (an error when it
// still runs after limit).
func (c *child) terminate(limit time.Duration) error {
	c.signal(syscall.SIGTERM)
	return <-c.wait(limit)
}

func (c *child) kill(t testing.TB) {
	t.Helper()
	c.signal(syscall.SIGKILL)
	<-c.wait(10 * time.Second)
}

// jetStream is a JetStream context on nc.
func jetStream(t testing.TB, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// readStream reads every message of the CALLCENTER stream.
func readStream(t testing.TB, js jetstream.JetStream) []audit.Message {
	t.Helper()
	msgs, err := audit.ReadStream(t.Context(), js, "CALLCENTER")
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// streamMsgs is the number of messages in the stream.
func streamMsgs(t testing.TB, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(t.Context(), "CALLCENTER")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}
