//go:build e2ek8s

package e2ek8s

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
)

// nodeIP is the node's address in netns k8s: the pods reach NATS, Redis and the
// simulator there.
const nodeIP = "10.245.0.1"

// leaseTTL is lease_ttl_seconds of every release: the bound on a failover.
const leaseTTL = 5 * time.Second

// ns is the namespace the releases are installed in.
const ns = "callbus-e2e"

// bed is the world the releases run against: engines on the node's address, the
// simulator behind a gate that counts each account's keys, and the tools.
type bed struct {
	nats    *natstest.Cluster
	redis   *redistest.Server
	rdb     *redis.Client
	sim     *simtest.Accounts
	gate    *keyGate
	simURL  string // http://10.245.0.1:PORT
	kubectl string
	helm    string
	chart   string
}

// newBed starts NATS, Redis and n simulated accounts (acct001…) on the node's
// address. Redis runs with protected mode off: the pods are remote clients, and
// it has no password here.
func newBed(t *testing.T, n int, configure func(i int, name string, c *sim.Config)) *bed {
	t.Helper()
	b := &bed{kubectl: need(t, "E2E_KUBECTL"), helm: need(t, "E2E_HELM"), chart: need(t, "E2E_CHART")}
	b.nats = natstest.StartClusterOn(t, nodeIP, 3)
	b.redis = redistest.StartWithArgs(t, "--bind", nodeIP+" 127.0.0.1", "--protected-mode", "no")
	b.rdb = b.redis.Client(t)
	b.sim = simtest.NewAccounts(t, n, configure)
	b.gate = &keyGate{next: b.sim.Handler(), used: map[string]map[string]int{}, revoked: map[string]bool{}}
	l, err := net.Listen("tcp", nodeIP+":0")
	if err != nil {
		t.Fatalf("simulator on the node address: %v", err)
	}
	srv := &http.Server{Handler: b.gate, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	b.simURL = "http://" + l.Addr().String()
	return b
}

// need is an environment variable run.sh sets.
func need(t *testing.T, key string) string {
	v := os.Getenv(key)
	if v == "" {
		t.Fatalf("%s is not set: run this test through deploy/e2e-k8s/run.sh (make e2e-k8s)", key)
	}
	return v
}

// redisURL is Redis as the pods reach it.
func (b *bed) redisURL() string {
	_, port, _ := net.SplitHostPort(b.redis.Addr)
	return "redis://" + net.JoinHostPort(nodeIP, port) + "/0"
}

// apiURL is account name's API base URL as the pods reach it.
func (b *bed) apiURL(name string) string { return b.simURL + sim.AccountPrefix + name }

// store is account name's state in Redis (its lease, outbox).
func (b *bed) store(t *testing.T, name string) *cursor.Store {
	s, err := cursor.New(b.rdb, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs a tool with a bound, returning its combined output.
func run(ctx context.Context, limit time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// k runs kubectl in the test namespace and fails t on an error.
func (b *bed) k(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t.Context(), 3*time.Minute, b.kubectl, append([]string{"-n", ns}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// h runs helm in the test namespace and fails t on an error.
func (b *bed) h(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t.Context(), 6*time.Minute, b.helm, append([]string{"-n", ns}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// keyGate serves the simulator, counting the keys each account is called with and
// answering 401 to revoked ones, as the real API does after a key rotation.
type keyGate struct {
	next    http.Handler
	mu      sync.Mutex
	used    map[string]map[string]int // account → key → requests
	revoked map[string]bool
}

func (g *keyGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	account, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, sim.AccountPrefix), "/")
	key := r.Header.Get("X-Api-Auth")
	g.mu.Lock()
	if g.used[account] == nil {
		g.used[account] = map[string]int{}
	}
	g.used[account][key]++
	revoked := g.revoked[key]
	g.mu.Unlock()
	if revoked {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error_type":"unauthenticated","message":"Invalid or missing API key in X-Api-Auth","errors":[]}`))
		return
	}
	g.next.ServeHTTP(w, r)
}

// uses is how many requests account made with key so far.
func (g *keyGate) uses(account, key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used[account][key]
}

// revoke makes key answer 401 from now on.
func (g *keyGate) revoke(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.revoked[key] = true
}
