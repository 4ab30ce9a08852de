// Package natstest gives tests a real NATS server with JetStream, in-process, on a
// free loopback port, with its store in a temporary directory.
package natstest

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Server is an in-process nats-server owned by one test.
type Server struct {
	*server.Server
	opts *server.Options
}

// Start runs a JetStream-enabled nats-server for t and shuts it down at the end.
func Start(t testing.TB) *Server {
	t.Helper()
	opts := &server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
	s := &Server{opts: opts}
	s.start(t)
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	ns, err := server.NewServer(s.opts)
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	go ns.Start()
	// Usually milliseconds; a node of a cluster (re)started while a race-enabled
	// suite loads both cores once took over 10 s.
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatalf("nats-server not ready after 30s")
	}
	s.Server = ns
	// Keep the port so Restart comes back on the same address for reconnecting clients.
	s.opts.Port = ns.Addr().(*net.TCPAddr).Port
}

// URL is the client URL of the server.
func (s *Server) URL() string { return s.ClientURL() }

// Restart shuts the server down and starts it again on the same port with the same
// store directory, as an operator's restart would.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Shutdown()
	s.WaitForShutdown()
	s.start(t)
}

// Conn connects to the server; the connection is closed when the test ends.
func (s *Server) Conn(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatalf("connect nats: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}
