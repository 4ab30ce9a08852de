package natstest

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Cluster is a JetStream cluster of in-process nats-servers on loopback, routed
// to each other, each with its own store directory: enough for R3 streams and
// for losing a node.
type Cluster struct {
	Nodes []*Server
}

// clusterReady bounds the wait for a meta leader and every route.
const clusterReady = 60 * time.Second

// StartCluster runs an n-node JetStream cluster (n >= 3 for R3) for t and shuts
// it down at the end. It returns once every node is up, routed to every other
// and JetStream has a meta leader.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	return StartClusterOn(t, "127.0.0.1", n)
}

// StartClusterOn is StartCluster with every node listening on host (clients and
// routes), for clients outside the loopback, such as a cluster's pods reaching
// the node's address (deploy/e2e-k8s). Ports are picked free on loopback.
func StartClusterOn(t testing.TB, host string, n int) *Cluster {
	t.Helper()
	routes := make([]*url.URL, n)
	clusterPorts := make([]int, n)
	for i := range n {
		clusterPorts[i] = freePort(t)
		routes[i] = &url.URL{Scheme: "nats-route", Host: net.JoinHostPort(host, strconv.Itoa(clusterPorts[i]))}
	}
	c := &Cluster{}
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       host,
			Port:       freePort(t),
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "callbus-test", Host: host, Port: clusterPorts[i]},
			Routes:     routes,
		}
		s := &Server{opts: opts}
		s.start(t)
		c.Nodes = append(c.Nodes, s)
	}
	t.Cleanup(func() {
		for _, s := range c.Nodes {
			s.Kill()
		}
	})
	c.waitReady(t)
	return c
}

// waitReady waits until every running node has its routes and a meta leader.
func (c *Cluster) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(clusterReady)
	for {
		ok := c.hasMetaLeader()
		for _, s := range c.Nodes {
			if s.Running() && (s.NumRoutes() < c.running()-1 || !s.JetStreamIsCurrent()) {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats cluster not ready after %s", clusterReady)
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
}

func (c *Cluster) running() int {
	n := 0
	for _, s := range c.Nodes {
		if s.Running() {
			n++
		}
	}
	return n
}

func (c *Cluster) hasMetaLeader() bool {
	for _, s := range c.Nodes {
		if s.Running() && s.JetStreamIsLeader() {
			return true
		}
	}
	return false
}

// URLs are the client URLs of every node, comma-separated (the nats_url form
// clients take for a cluster).
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		urls[i] = "nats://" + net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
	}
	return strings.Join(urls, ",")
}

// Conn connects to the cluster (any node, reconnecting to the others); closed
// when the test ends.
func (c *Cluster) Conn(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatalf("connect nats cluster: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// KillNode stops node i at once, as a crash would (its store stays).
func (c *Cluster) KillNode(i int) { c.Nodes[i].Kill() }

// RestartNode starts node i again on its ports and store, and waits until the
// cluster is whole again.
func (c *Cluster) RestartNode(t testing.TB, i int) {
	t.Helper()
	s := c.Nodes[i]
	s.Kill()
	s.start(t)
	c.waitReady(t)
}

// Kill shuts the server down and waits until it stopped; it is safe to call on a
// stopped server.
func (s *Server) Kill() {
	if s.Server == nil {
		return
	}
	s.Shutdown()
	s.WaitForShutdown()
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

// NodeIndex is the index of the node named name (a stream's Cluster.Leader), or
// -1.
func (c *Cluster) NodeIndex(name string) int {
	for i, s := range c.Nodes {
		if s.opts.ServerName == name {
			return i
		}
	}
	return -1
}
