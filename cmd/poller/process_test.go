package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/audit"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/simtest"
	"github.com/callbus/callbus/schemas"
	"github.com/nats-io/nats.go/jetstream"
)

// These tests run the real poller binary as child processes, so they can kill it.

const procKey = "proc-test-key-93a1f7"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// pollerBinary builds this command once per test binary.
func pollerBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "callbus-poller-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "poller")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func startWorld(t testing.TB, speed float64, backlog int) *simtest.World {
	t.Helper()
	return startWorldWith(t, speed, sim.Config{Seed: 11, Agents: 12, CallRate: 4, Backlog: backlog})
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

type child struct {
	cmd    *exec.Cmd
	stderr *simtest.Buffer
	exited chan error
}

// pollerEnv is the child's environment: the test's, without CALLBUS_ settings,
// plus these.
func pollerEnv(w *simtest.World, natsURL, redisURL, instance, httpAddr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CALLBUS_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"CALLBUS_API_URL="+w.URL, "CALLBUS_API_KEY="+procKey, "CALLBUS_ACCOUNT=acme",
		"CALLBUS_NATS_URL="+natsURL, "CALLBUS_REDIS_URL="+redisURL, "CALLBUS_HTTP_ADDR="+httpAddr,
		"CALLBUS_INSTANCE_ID="+instance, "CALLBUS_LEASE_TTL_SECONDS=3",
		"CALLBUS_CALLS_INTERVAL_SECONDS=1", "CALLBUS_OPEN_CALLS_INTERVAL_SECONDS=1",
		"CALLBUS_METRICS_INTERVAL_SECONDS=1", "CALLBUS_USERS_INTERVAL_SECONDS=1",
		"CALLBUS_TEAMS_INTERVAL_SECONDS=1", "CALLBUS_USER_STATUSES_INTERVAL_SECONDS=5",
		"CALLBUS_RATE_LIMIT_SHARE=100", "CALLBUS_SHUTDOWN_TIMEOUT_SECONDS=5", "CALLBUS_LOG_LEVEL=info",
	)
}

func startPoller(t testing.TB, env []string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(pollerBinary(t), "run"), stderr: &simtest.Buffer{}, exited: make(chan error, 1)}
	c.cmd.Env = env
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() {
		c.signal(syscall.SIGKILL)
		<-c.wait(10 * time.Second)
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

func (c *child) kill(t testing.TB) {
	t.Helper()
	c.signal(syscall.SIGKILL)
	<-c.wait(10 * time.Second)
}

// auditUntilSettled audits the stream against the frozen world until the poller
// has caught up (no truth or count problem left) or the deadline passes, and
// returns the last report, with schema problems added.
func auditUntilSettled(t *testing.T, ns *natstest.Server, w *simtest.World, store *cursor.Store) *audit.Report {
	t.Helper()
	return auditSettled(t, ns, w, store, 0)
}

// auditSettled is auditUntilSettled for a world whose history (sim.Config.History,
// extra calls, in neither the truth nor the counts) was backfilled too.
func auditSettled(t *testing.T, ns *natstest.Server, w *simtest.World, store *cursor.Store, extra int) *audit.Report {
	t.Helper()
	js, err := jetstream.New(ns.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		truth := w.ReadTruth(t)
		msgs, err := audit.ReadStream(t.Context(), js, "CALLCENTER")
		if err != nil {
			t.Fatal(err)
		}
		r := audit.Check(msgs, "callcenter")
		before := len(r.Problems)
		r.CompareTruth(truth)
		st := w.Sim.Stats() // the backlog is not in the truth: count it
		r.CompareCounts(st.Calls+extra, st.CallsEnded+extra, st.MetricsFinalized+extra)
		n, _ := store.OutboxLen(t.Context())
		if (len(r.Problems) == before && n == 0) || time.Now().After(deadline) {
			v, err := schemas.New()
			if err != nil {
				t.Fatal(err)
			}
			r.Problems = append(r.Problems, audit.ValidateSchemas(msgs, v)...)
			return r
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func report(t *testing.T, r *audit.Report) {
	t.Helper()
	for _, p := range r.Problems {
		t.Error(p)
	}
	t.Logf("audited %d messages: %v", r.Messages, r.ByType)
	for _, typ := range []string{"call.created", "call.ended", "metric.finalized", "participant.status_changed", "user.status_changed"} {
		if r.ByType[typeOf(typ)] == 0 {
			t.Errorf("no %s in the stream: the run did too little to test", typ)
		}
	}
}

// TestCrashSafety kills the poller with SIGKILL at random moments many times, then
// restarts Redis and NATS under it, and audits the stream against the simulator's
// ground truth: one call.created per call, one call.ended and one metric.finalized
// per ended call, unique ids, consistent chains, final states as in the world.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	rs := redistest.StartDurable(t)
	ns := natstest.Start(t)
	// The backlog keeps the relay busy at the start, so kills land mid-publish.
	w := startWorld(t, 100, 3000)
	store, err := cursor.New(rs.Client(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	addr := simtest.FreeAddr(t)
	env := pollerEnv(w, ns.URL(), rs.URL, "crash-test", addr)
	rnd := newRand(1)
	for i := range 12 {
		c := startPoller(t, env)
		// The killed one's lease runs out first (a new process is a new holder).
		waitRole(t, addr, "leader", 30*time.Second)
		time.Sleep(time.Duration(rnd.IntN(2500)) * time.Millisecond) // a random moment, not a condition
		c.kill(t)
		t.Logf("kill %d done", i+1)
	}
	// Redis and NATS restart under a running poller, which is then killed too.
	js, err := jetstream.New(ns.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	c := startPoller(t, env)
	waitRole(t, addr, "leader", 30*time.Second)
	streamGrows(t, js, "the new poller to publish")
	rs.Restart(t)
	streamGrows(t, js, "the poller to publish after the Redis restart")
	ns.Restart(t)
	streamGrows(t, js, "the poller to publish after the NATS restart")
	c.kill(t)

	w.Freeze()
	final := startPoller(t, env)
	r := auditUntilSettled(t, ns, w, store)
	final.signal(syscall.SIGTERM)
	if err := <-final.wait(30 * time.Second); err != nil {
		t.Errorf("poller after SIGTERM: %v\n%s", err, final.stderr.String())
	}
	report(t, r)
	// Finished backlog calls far behind the newest were pruned from Redis, and did
	// not come back as new calls (Check: one call.created per call).
	if n, err := store.SnapshotCount(t.Context(), "call"); err != nil || n >= int64(w.Sim.Stats().Calls) {
		t.Errorf("%d call snapshots left of %d calls (%v): nothing was pruned", n, w.Sim.Stats().Calls, err)
	}
}
