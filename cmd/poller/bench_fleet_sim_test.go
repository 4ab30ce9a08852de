package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/simtest"
)

// The load of BenchmarkFleetAccounts: its accounts, their mix, and the
// simulators serving them, each a callcenter-sim process of its own so that
// the simulators' CPU is read from their own /proc entries, apart from the
// poller's and from the benchmark's (which holds the NATS server).

// fleetMix is the benchmark's load, from the environment (defaults in brackets):
//
//	CALLBUS_BENCH_ACCOUNTS    accounts on the one poller [2000]
//	CALLBUS_BENCH_BUSY_SHARE  the busy accounts' share, 0 to 1 [0.1]
//	CALLBUS_BENCH_BUSY_RATE   a busy account's new calls a minute [6]
//	CALLBUS_BENCH_QUIET_RATE  a quiet account's new calls a minute [0.1: one per 10 minutes]
//	CALLBUS_BENCH_AGENTS      users per account [20]
//	CALLBUS_BENCH_PLAN        every account's plan, requests a minute of its own [100]
//	CALLBUS_BENCH_WARMUP      after every account is led, before measuring [30s]
//	CALLBUS_BENCH_LIVE        the measured window [3m]
//	CALLBUS_BENCH_FLOOR       every account's poll_interval_floor_seconds [unset: the default, 2]
type fleetMix struct {
	accounts, busy      int
	busyRate, quietRate float64
	agents, plan        int
	warmup, live        time.Duration
	floor               int // seconds; 0: the default
}

// fleetMixFromEnv reads the mix; a value that does not parse, or is out of
// range, takes its default.
func fleetMixFromEnv() fleetMix {
	m := fleetMix{
		accounts:  envInt("CALLBUS_BENCH_ACCOUNTS", 2000),
		busyRate:  envFloat("CALLBUS_BENCH_BUSY_RATE", 6),
		quietRate: envFloat("CALLBUS_BENCH_QUIET_RATE", 0.1),
		agents:    envInt("CALLBUS_BENCH_AGENTS", 20),
		plan:      envInt("CALLBUS_BENCH_PLAN", 100),
		warmup:    envDuration("CALLBUS_BENCH_WARMUP", 30*time.Second),
		live:      envDuration("CALLBUS_BENCH_LIVE", 3*time.Minute),
		floor:     envInt("CALLBUS_BENCH_FLOOR", 0),
	}
	share := envFloat("CALLBUS_BENCH_BUSY_SHARE", 0.1)
	if os.Getenv("CALLBUS_BENCH_BUSY_SHARE") == "0" {
		share = 0
	}
	m.busy = min(m.accounts, int(float64(m.accounts)*min(share, 1)+0.5))
	return m
}

func (m fleetMix) String() string {
	s := fmt.Sprintf("%d accounts (%d busy at %g calls a minute, %d quiet at %g), %d users each, plan %d",
		m.accounts, m.busy, m.busyRate, m.accounts-m.busy, m.quietRate, m.agents, m.plan)
	if m.floor > 0 {
		s += fmt.Sprintf(", interval floor %d s", m.floor)
	}
	return s
}

// envFloat is the environment's positive number name, or def.
func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

// simKey is the admin key the simulator processes are given: account A's key
// is simKey-A (callcenter-sim --accounts).
const simKey = "bench-fleet-key"

// simGroup is one callcenter-sim process serving a group of accounts.
type simGroup struct {
	names    []string
	addr     string
	truthDir string
	cmd      *exec.Cmd
	stderr   *simtest.Buffer
	exited   chan error
}

// baseURL is account name's api_url.
func (g *simGroup) baseURL(name string) string {
	return "http://" + g.addr + sim.AccountPrefix + name
}

// startSims starts a simulator process for the busy accounts and one for the
// quiet ones (a group with no account is left out). Both worlds start now, at
// real speed: a simulated time is the real one, so the delays need no
// conversion. Every account's truth log is written to a directory of the test.
func startSims(b *testing.B, m fleetMix) []*simGroup {
	names := sim.AccountNames(m.accounts)
	var groups []*simGroup
	for i, g := range []struct {
		names []string
		rate  float64
	}{{names[:m.busy], m.busyRate}, {names[m.busy:], m.quietRate}} {
		if len(g.names) == 0 {
			continue
		}
		groups = append(groups, startSim(b, g.names, uint64(1+i*100000), g.rate, m))
	}
	return groups
}

func startSim(b *testing.B, names []string, seed uint64, rate float64, m fleetMix) *simGroup {
	g := &simGroup{names: names, addr: simtest.FreeAddr(b), truthDir: b.TempDir(), stderr: &simtest.Buffer{}, exited: make(chan error, 1)}
	// --start with the nanoseconds: the world's clock then trails the real one
	// only by the process's start-up (milliseconds), which lengthens the delays
	// measured, never shortens them. --tick 0: worlds advance on requests and
	// at exit, not every second for thousands of accounts.
	g.cmd = exec.Command(simBinary(b), "--addr", g.addr, "--api-key", simKey, "--accounts", strings.Join(names, ","),
		"--seed", strconv.FormatUint(seed, 10), "--speed", "1", "--start", time.Now().UTC().Format(time.RFC3339Nano),
		"--agents", strconv.Itoa(m.agents), "--call-rate", strconv.FormatFloat(rate, 'g', -1, 64),
		"--plan", strconv.Itoa(m.plan), "--tick", "0", "--truth-dir", g.truthDir)
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		b.Fatalf("start callcenter-sim: %v", err)
	}
	go func() { g.exited <- g.cmd.Wait() }()
	b.Cleanup(func() {
		_ = g.cmd.Process.Kill()
		<-g.wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", g.addr, time.Second)
		if err == nil {
			_ = c.Close()
			return g
		}
		if time.Now().After(deadline) {
			b.Fatalf("callcenter-sim not listening on %s: %v\n%s", g.addr, err, tail(g.stderr.String(), 2000))
		}
		time.Sleep(50 * time.Millisecond) // the process is starting; poll until it listens
	}
}

// wait returns a channel that yields the exit error, once for every caller.
func (g *simGroup) wait() <-chan error {
	out := make(chan error, 1)
	go func() {
		err := <-g.exited
		g.exited <- err
		out <- err
	}()
	return out
}

// stop ends the process with SIGTERM, which runs every world up to now and
// flushes the truth logs, and reads them.
func (g *simGroup) stop(b *testing.B) map[string]*audit.Truth {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-g.wait():
		if err != nil {
			b.Fatalf("callcenter-sim: %v\n%s", err, tail(g.stderr.String(), 2000))
		}
	case <-time.After(2 * time.Minute):
		b.Fatalf("callcenter-sim still running 2 minutes after SIGTERM")
	}
	out := map[string]*audit.Truth{}
	for _, name := range g.names {
		f, err := os.Open(filepath.Join(g.truthDir, name+".ndjson"))
		if os.IsNotExist(err) {
			continue // never asked for: its world was never built
		}
		if err != nil {
			b.Fatal(err)
		}
		t, err := audit.ReadTruth(f)
		_ = f.Close()
		if err != nil {
			b.Fatalf("truth of %s: %v", name, err)
		}
		out[name] = t
	}
	return out
}

// cpu is the CPU-seconds the process has used so far.
func (g *simGroup) cpu(b *testing.B) float64 { return procCPU(b, g.cmd.Process.Pid) }

var (
	simBuildOnce sync.Once
	simPath      string
	simBuildErr  error
)

// simBinary builds cmd/callcenter-sim once per test binary.
func simBinary(b testing.TB) string {
	b.Helper()
	simBuildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "callbus-sim-bin-")
		if err != nil {
			simBuildErr = err
			return
		}
		simPath = filepath.Join(dir, "callcenter-sim")
		out, err := exec.Command("go", "build", "-o", simPath, "../callcenter-sim").CombinedOutput()
		if err != nil {
			simBuildErr = fmt.Errorf("go build callcenter-sim: %v\n%s", err, out)
		}
	})
	if simBuildErr != nil {
		b.Fatal(simBuildErr)
	}
	return simPath
}
