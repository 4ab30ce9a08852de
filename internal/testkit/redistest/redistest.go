// Package redistest gives tests a real, private Redis server.
//
// Start launches `redis-server` on a free loopback port with persistence off and
// stops it when the test ends. When CALLBUS_TEST_REDIS_URL is set, Start uses that
// server instead (it is not flushed: callers use distinct key prefixes); tests that
// stop or restart their server use StartPrivate or StartDurable, which always run
// their own. When redis-server is missing the test is skipped and the skip
// reported to `make test` (package skipreport), unless
// CALLBUS_REQUIRE_INTEGRATION=1, in which case it fails: CI must never silently
// skip an integration test. Tests that run redis-server themselves find it with
// Binary, under the same rule.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/skipreport"
	"github.com/redis/go-redis/v9"
)

// Server is a running redis-server owned by one test.
type Server struct {
	Addr string // host:port
	URL  string // redis://host:port/0
	cmd  *exec.Cmd
	dir  string
	port int
	// durable: append-only file fsynced on every write, so a restart (even after
	// SIGKILL) keeps every acknowledged write, as a production Redis for callbus.
	durable bool
	// restarting: start must reuse port (Restart); exited closes when cmd ended.
	restarting bool
	exited     chan struct{}
	extra      []string // more redis-server arguments (StartWithArgs)
	busPort    int      // a cluster node's bus port (cluster.go)
	conf       string   // a sentinel's config file (sentinel.go): run with --sentinel
	admin      *redis.Client
}

// Start returns a Redis server for t: CALLBUS_TEST_REDIS_URL when set, otherwise a
// private redis-server on a free port that is killed at the end of the test.
func Start(t testing.TB) *Server { return start(t, true, false) }

// StartPrivate is Start without CALLBUS_TEST_REDIS_URL: always a redis-server of
// the test's own, which it may Stop and Restart.
func StartPrivate(t testing.TB) *Server { return start(t, false, false) }

// StartDurable is StartPrivate with persistence: an append-only file fsynced on
// every write, kept across Restart.
func StartDurable(t testing.TB) *Server { return start(t, false, true) }

// StartWithArgs is StartPrivate with more redis-server arguments, which win over
// the defaults (e.g. "--maxmemory-policy", "allkeys-lru"); they are kept across
// Restart.
func StartWithArgs(t testing.TB, args ...string) *Server {
	t.Helper()
	s := &Server{dir: t.TempDir(), extra: args}
	s.start(t, Binary(t), freePort(t))
	t.Cleanup(s.Stop)
	return s
}

// Dir is the server's working directory (its RDB and AOF files).
func (s *Server) Dir() string { return s.dir }

// Binary returns the path of redis-server. Without one it skips the test, or fails
// it when CALLBUS_REQUIRE_INTEGRATION=1.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		skipreport.Skip(t, "redis-server not found (apt-get install redis-server): the Redis integration tests did not run")
	}
	return bin
}

// start uses CALLBUS_TEST_REDIS_URL when shared allows it and the variable is set,
// and starts a private server otherwise.
func start(t testing.TB, shared, durable bool) *Server {
	t.Helper()
	if u := os.Getenv("CALLBUS_TEST_REDIS_URL"); u != "" && shared {
		opt, err := redis.ParseURL(u)
		if err != nil {
			t.Fatalf("CALLBUS_TEST_REDIS_URL: %v", err)
		}
		return &Server{Addr: opt.Addr, URL: u}
	}
	s := &Server{dir: t.TempDir(), durable: durable}
	s.start(t, Binary(t), freePort(t))
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start(t testing.TB, bin string, port int) {
	t.Helper()
	// A free port can be taken by another test's server between freePort and the
	// bind; a fresh server then tries another port (a restart must keep its own).
	for attempt := 1; ; attempt++ {
		err := s.launch(bin, port)
		if err == nil {
			return
		}
		if attempt == 3 {
			t.Fatalf("redis-server on 127.0.0.1:%d: %v", port, err)
		}
		if !s.restarting {
			port = freePort(t)
		}
	}
}

// launch starts redis-server on port and waits until it answers, or until it
// exits (a port taken meanwhile) or a generous start-up time passes (a loaded
// 2-core machine).
func (s *Server) launch(bin string, port int) error {
	s.port = port
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = "redis://" + s.Addr + "/0"
	aof := []string{"--appendonly", "no"}
	if s.durable {
		aof = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "redis.log")}, aof...)
	args = append(args, s.extra...)
	if s.conf != "" {
		args = append([]string{s.conf, "--sentinel"}, args...)
	}
	s.cmd = exec.Command(bin, args...)
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	exited := make(chan struct{})
	s.exited = exited
	go func() { _ = s.cmd.Wait(); close(exited) }()
	if err := waitPing(s.Addr, 30*time.Second, exited); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// Restart kills the server (SIGKILL, as a crash would) and starts a new one on the
// same port: empty, or with every acknowledged write for a durable server. It fails
// the test for a server it does not own (Start's CALLBUS_TEST_REDIS_URL).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if s.cmd == nil {
		t.Fatalf("redistest: cannot restart a server given by CALLBUS_TEST_REDIS_URL")
	}
	bin := s.cmd.Path
	s.Stop()
	s.restarting = true
	defer func() { s.restarting = false }()
	s.start(t, bin, s.port)
}

// Stop kills the server. It is safe to call twice.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd.Process = nil
	if s.admin != nil {
		_ = s.admin.Close()
		s.admin = nil
	}
}

// Pause stops the server's process (SIGSTOP): connections stay open and nothing
// answers, as a Redis hung on a slow disk or a frozen VM; Resume (SIGCONT)
// lets it go on. The test's cleanup resumes a server left paused.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGSTOP)
	t.Cleanup(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
}

// Resume undoes Pause.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGCONT)
}

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		t.Fatalf("redistest: cannot signal a server this test does not run")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("redistest: %v: %v", sig, err)
	}
}

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func waitPing(addr string, within time.Duration, exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering PING after %s: %w", within, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before answering (port taken?): %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
