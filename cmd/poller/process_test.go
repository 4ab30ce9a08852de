package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http/httptest"
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

// liveWorld is a simulator whose manual clock a goroutine moves at high speed
// until frozen.
type liveWorld struct {
	sim   *sim.Sim
	clock *sim.ManualClock
	truth *lockedBuffer
	url   string
	stop  chan struct{}
	done  chan struct{}
}

func startWorld(t testing.TB, speed float64, backlog int) *liveWorld {
	t.Helper()
	return startWorldWith(t, speed, sim.Config{Seed: 11, Agents: 12, CallRate: 4, Backlog: backlog})
}

// startWorldWith starts a world from cfg (key and truth are set here; without a
// clock, a manual one moved at speed, where 0 leaves the world frozen).
func startWorldWith(t testing.TB, speed float64, cfg sim.Config) *liveWorld {
	t.Helper()
	w := &liveWorld{clock: sim.NewManualClock(time.Now().UTC().Truncate(time.Second)), truth: &lockedBuffer{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if cfg.Clock == nil {
		cfg.Clock = w.clock
	} else {
		speed = 0 // a clock of the caller's: nothing to advance
	}
	cfg.APIKey, cfg.Truth = procKey, w.truth
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.sim = s
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	w.url = srv.URL
	go func() {
		defer close(w.done)
		if speed == 0 {
			<-w.stop
			return
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				s.Advance(time.Duration(speed * float64(20*time.Millisecond)))
			}
		}
	}()
	t.Cleanup(w.freeze)
	return w
}

// freeze stops the world's clock (idempotent).
func (w *liveWorld) freeze() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

type child struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan error
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// pollerEnv is the child's environment: the test's, without CALLBUS_ settings,
// plus these.
func pollerEnv(w *liveWorld, natsURL, redisURL, instance, httpAddr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CALLBUS_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"CALLBUS_API_URL="+w.url, "CALLBUS_API_KEY="+procKey, "CALLBUS_ACCOUNT=acme",
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
	c := &child{cmd: exec.Command(pollerBinary(t), "run"), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
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
// has caught up (no truth problem left) or the deadline passes, and returns the
// last report.
func auditUntilSettled(t *testing.T, ns *natstest.Server, w *liveWorld, store *cursor.Store) *audit.Report {
	t.Helper()
	js, err := jetstream.New(ns.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if err := w.sim.Close(); err != nil {
			t.Fatal(err)
		}
		truth, err := audit.ReadTruth(bytes.NewReader([]byte(w.truth.String())))
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := audit.ReadStream(t.Context(), js, "CALLCENTER")
		if err != nil {
			t.Fatal(err)
		}
		r := audit.Check(msgs, "callcenter")
		before := len(r.Problems)
		r.CompareTruth(truth)
		n, _ := store.OutboxLen(t.Context())
		st := w.sim.Stats() // the backlog is not in the truth: count it
		counts := len(r.Created) == st.Calls && len(r.Ended) == st.CallsEnded && len(r.Finalized) == st.MetricsFinalized
		if (len(r.Problems) == before && n == 0 && counts) || time.Now().After(deadline) {
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
	addr := freeAddr(t)
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
	c := startPoller(t, env)
	time.Sleep(2 * time.Second)
	rs.Restart(t)
	time.Sleep(2 * time.Second)
	ns.Restart(t)
	time.Sleep(2 * time.Second)
	c.kill(t)

	w.freeze()
	final := startPoller(t, env)
	r := auditUntilSettled(t, ns, w, store)
	final.signal(syscall.SIGTERM)
	if err := <-final.wait(30 * time.Second); err != nil {
		t.Errorf("poller after SIGTERM: %v\n%s", err, final.stderr.String())
	}
	report(t, r)
	// Finished backlog calls far behind the newest were pruned from Redis, and did
	// not come back as new calls (Check: one call.created per call).
	if n, err := store.SnapshotCount(t.Context(), "call"); err != nil || n >= int64(w.sim.Stats().Calls) {
		t.Errorf("%d call snapshots left of %d calls (%v): nothing was pruned", n, w.sim.Stats().Calls, err)
	}
	// The backlog writes no truth lines: check it by counts.
	st := w.sim.Stats()
	if len(r.Created) != st.Calls || len(r.Ended) != st.CallsEnded || len(r.Finalized) != st.MetricsFinalized {
		t.Errorf("stream has %d calls created, %d ended, %d metrics finalized; the world %d, %d, %d",
			len(r.Created), len(r.Ended), len(r.Finalized), st.Calls, st.CallsEnded, st.MetricsFinalized)
	}
}
