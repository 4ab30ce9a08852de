package main

// The example's test environment, written against public packages only (no
// callbus internals), so that a copy of this directory tests and vets as a
// module of its own (TestCopyBuildsAndVetsAlone): a real in-process NATS server
// with JetStream, a real redis-server on a free port, and the events built as
// the poller builds them.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// waitFor polls cond until it holds, failing t after limit.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// buffer is an io.Writer safe for concurrent use, read while written.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// natsServer is an in-process nats-server with JetStream, stopped when the test ends.
type natsServer struct {
	*server.Server
	opts *server.Options
}

func startNATS(t testing.TB) *natsServer {
	t.Helper()
	s := &natsServer{opts: &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true}}
	s.start(t)
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

func (s *natsServer) start(t testing.TB) {
	t.Helper()
	ns, err := server.NewServer(s.opts)
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatal("nats-server not ready after 30s")
	}
	s.Server = ns
	s.opts.Port = ns.Addr().(*net.TCPAddr).Port // Restart comes back on the same address
}

func (s *natsServer) URL() string { return s.ClientURL() }

// Restart shuts the server down and starts it again with the same port and store.
func (s *natsServer) Restart(t testing.TB) {
	t.Helper()
	s.Shutdown()
	s.WaitForShutdown()
	s.start(t)
}

// Conn is a connection to the server, closed when the test ends.
func (s *natsServer) Conn(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// redisServer is a redis-server of the test's own on a free port, persistence
// off. Without redis-server the test is skipped (failed when
// CALLBUS_REQUIRE_INTEGRATION=1).
type redisServer struct {
	URL  string
	addr string
	bin  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		const why = "redis-server not found (apt-get install redis-server): the consumer example's Redis tests did not run"
		if os.Getenv("CALLBUS_REQUIRE_INTEGRATION") == "1" {
			t.Fatal(why)
		}
		if f := os.Getenv("CALLBUS_SKIP_REPORT"); f != "" {
			if w, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				_, _ = fmt.Fprintln(w, why)
				_ = w.Close()
			}
		}
		t.Skip(why)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &redisServer{bin: bin, port: port, addr: "127.0.0.1:" + strconv.Itoa(port)}
	s.URL = "redis://" + s.addr + "/0"
	s.start(t)
	t.Cleanup(s.Stop)
	return s
}

func (s *redisServer) start(t testing.TB) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	s.done = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer c.Close()
	waitFor(t, 30*time.Second, "redis-server to answer", func() bool { return c.Ping(context.Background()).Err() == nil })
}

// Stop kills the server; safe to call twice.
func (s *redisServer) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd.Process = nil
}

// Restart starts a stopped server again on the same port, empty.
func (s *redisServer) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.start(t)
}

// Client is a client of the server, closed when the test ends.
func (s *redisServer) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// ensureStream creates the events' stream as callbus provisions it: every
// subject under prefix, with a duplicate window of dupes.
func ensureStream(ctx context.Context, js jetstream.JetStream, name, prefix string, dupes time.Duration, memory bool) error {
	storage := jetstream.FileStorage
	if memory {
		storage = jetstream.MemoryStorage
	}
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"},
		MaxAge: time.Hour, Duplicates: dupes, Storage: storage})
	return err
}

// newEvent builds an event of the account "acme" as callbus does: its id is
// derived from the type, the entity and the state key (deterministic), its data
// marshalled.
func newEvent(typ events.Type, entity, stateKey string, at time.Time, data any) (events.Envelope, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return events.Envelope{}, err
	}
	sum := sha256.Sum256([]byte("acme\x00" + string(typ) + "\x00" + entity + "\x00" + stateKey))
	return events.Envelope{SpecVersion: events.SpecVersion, ID: hex.EncodeToString(sum[:16]), Source: events.Source("acme"),
		Type: typ, Subject: entity, Time: at.UTC(), DataContentType: "application/json", Data: raw}, nil
}
