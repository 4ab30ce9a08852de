package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/sim"
	"github.com/callbus/callbus/internal/testkit/audit"
	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// fleetLeaseTTL is CALLBUS_LEASE_TTL_SECONDS of fleet pollers: the bound on
// taking over a dead replica's accounts.
const fleetLeaseTTL = 3 * time.Second

// fleetShutdown is CALLBUS_SHUTDOWN_TIMEOUT_SECONDS of fleet pollers: the bound
// on a leaving poller's drain.
const fleetShutdown = 10 * time.Second

// fleetBed is a fleet test's world: a 3-node NATS cluster, a Redis Cluster of
// three shards (master and replica each), the multi-account simulator and an
// accounts_dir holding one values file and one key file per account.
type fleetBed struct {
	nats    *natstest.Cluster
	redis   *redistest.Cluster
	rdb     *redis.ClusterClient
	sim     *simtest.Accounts
	dir     string
	stores  map[string]*cursor.Store
	pollers map[string]*fleetPoller // the live ones
	all     []*fleetPoller          // every one started
}

// fleetPoller is one poller process of the fleet.
type fleetPoller struct {
	*child
	instance, addr string
}

// newFleetBed starts the engines and n accounts (worlds small, no backlog,
// unlimited plan: the simulator runs fast) and writes the accounts_dir.
func newFleetBed(t *testing.T, n int) *fleetBed {
	t.Helper()
	b := &fleetBed{nats: natstest.StartCluster(t, 3), redis: redistest.StartShards(t, 3),
		dir: t.TempDir(), stores: map[string]*cursor.Store{}, pollers: map[string]*fleetPoller{}}
	b.rdb = b.redis.Client(t)
	b.sim = simtest.NewAccounts(t, n, func(_ int, _ string, c *sim.Config) {
		c.Agents, c.Teams, c.CallRate, c.Plan = 6, 2, 3, 0
	})
	for _, name := range b.sim.Names() {
		writeAccount(t, b.dir, name, b.sim.BaseURL(name), simtest.AccountKey(name))
		s, err := cursor.New(b.rdb, name)
		if err != nil {
			t.Fatal(err)
		}
		b.stores[name] = s
	}
	return b
}

// stream is a JetStream context on the cluster.
func (b *fleetBed) stream(t testing.TB) jetstream.JetStream { return jetStream(t, b.nats.Conn(t)) }

// env is a fleet poller's environment: the process's settings; each account's
// come from its file.
func (b *fleetBed) env(instance, httpAddr string) []string {
	return append(hostEnv(),
		"CALLBUS_ACCOUNTS_DIR="+b.dir, "CALLBUS_NATS_URL="+b.nats.URLs(), "CALLBUS_STREAM_REPLICAS=3",
		"CALLBUS_REDIS_CLUSTER_ADDRS="+strings.Join(b.redis.Addrs(), ","),
		"CALLBUS_HTTP_ADDR="+httpAddr, "CALLBUS_INSTANCE_ID="+instance,
		"CALLBUS_LEASE_TTL_SECONDS="+strings.TrimSuffix(fleetLeaseTTL.String(), "s"),
		"CALLBUS_CALLS_INTERVAL_SECONDS=2", "CALLBUS_OPEN_CALLS_INTERVAL_SECONDS=2",
		"CALLBUS_METRICS_INTERVAL_SECONDS=2", "CALLBUS_USERS_INTERVAL_SECONDS=2",
		"CALLBUS_TEAMS_INTERVAL_SECONDS=5", "CALLBUS_USER_STATUSES_INTERVAL_SECONDS=30",
		"CALLBUS_RATE_LIMIT_SHARE=100", "CALLBUS_SHUTDOWN_TIMEOUT_SECONDS="+strings.TrimSuffix(fleetShutdown.String(), "s"), "CALLBUS_LOG_LEVEL=info",
	)
}

// start runs a poller named instance; it is killed when the test ends, and no
// account's key may appear in its output.
func (b *fleetBed) start(t *testing.T, instance string) *fleetPoller {
	t.Helper()
	addr := simtest.FreeAddr(t)
	p := &fleetPoller{child: startPoller(t, b.env(instance, addr)), instance: instance, addr: addr}
	b.pollers[instance] = p
	b.all = append(b.all, p)
	t.Cleanup(func() {
		for _, name := range b.sim.Names() {
			if strings.Contains(p.stderr.String(), simtest.AccountKey(name)) {
				t.Errorf("%s's API key appears in %s's output", name, instance)
				return
			}
		}
	})
	return p
}

// stop ends a poller with SIGTERM (a graceful hand-off of its accounts) and
// forgets it.
func (b *fleetBed) stop(t *testing.T, p *fleetPoller) {
	t.Helper()
	if err := p.terminate(60 * time.Second); err != nil {
		t.Errorf("%s after SIGTERM: %v\n%s", p.instance, err, tail(p.stderr.String(), 3000))
	}
	delete(b.pollers, p.instance)
}

// kill ends a poller with SIGKILL and forgets it.
func (b *fleetBed) kill(t *testing.T, p *fleetPoller) {
	t.Helper()
	p.child.kill(t)
	delete(b.pollers, p.instance)
}

// holders reads every account's lease holder ("" when none, or unreadable).
func (b *fleetBed) holders(t *testing.T) map[string]lease {
	out := map[string]lease{}
	for name, s := range b.stores {
		h, tok, _, err := s.Leader(t.Context())
		if err == nil {
			out[name] = lease{h, tok}
		}
	}
	return out
}

// instanceOf is the instance id of a lease holder ("<instance>/<random>").
func instanceOf(holder string) string {
	instance, _, _ := strings.Cut(holder, "/")
	return instance
}

// lease is an account's holder and fencing token at one look.
type lease struct {
	holder string
	token  int64
}

// allLed waits until every account has a leader among the live pollers; on
// timeout it shows who holds what and the end of each poller's log.
func (b *fleetBed) allLed(t *testing.T, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		hs := b.holders(t)
		var unled []string
		for _, name := range b.sim.Names() {
			if b.pollers[instanceOf(hs[name].holder)] == nil {
				unled = append(unled, name+"="+hs[name].holder)
			}
		}
		if len(unled) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range b.pollers {
				t.Logf("%s log:\n%s", p.instance, tail(p.stderr.String(), 4000))
			}
			t.Fatalf("after %s, accounts not led by a live poller: %v", limit, unled)
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}

// auditAll audits each account's events against its truth until every account
// is settled (no problem, empty outbox) or the deadline passes, and returns the
// reports by account and the number of messages read.
func (b *fleetBed) auditAll(t *testing.T, limit time.Duration) (map[string]*audit.Report, int) {
	t.Helper()
	js := b.stream(t)
	deadline := time.Now().Add(limit)
	for {
		// Each read is bounded: a read of the R3 stream can wait forever on a
		// consumer that lost its node (seen in CI); it is then simply read again.
		rctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		msgs, err := audit.ReadStream(rctx, js, "CALLCENTER")
		cancel()
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			t.Logf("reading the stream: %v; reading it again", err)
			continue
		}
		reports, settled := b.auditOnce(t, byAccount(msgs))
		if settled || time.Now().After(deadline) {
			return reports, len(msgs)
		}
		time.Sleep(time.Second) // pacing between audits, not a wait for a condition
	}
}

// auditOnce audits every account once; settled when all are clean.
func (b *fleetBed) auditOnce(t *testing.T, msgs map[string][]audit.Message) (map[string]*audit.Report, bool) {
	reports := map[string]*audit.Report{}
	settled := true
	for _, name := range b.sim.Names() {
		r := audit.Check(msgs[name], "callcenter")
		r.CompareTruth(b.sim.ReadTruth(t, name))
		s, err := b.sim.Sim(name)
		if err != nil {
			t.Fatal(err)
		}
		st := s.Stats()
		r.CompareCounts(st.Calls, st.CallsEnded, st.MetricsFinalized)
		n, err := b.stores[name].OutboxLen(t.Context())
		if !r.OK() || err != nil || n > 0 {
			settled = false
		}
		reports[name] = r
	}
	return reports, settled
}

// explain logs, for each account with problems, its lease, outbox and the
// pollers' last log lines about it.
func (b *fleetBed) explain(t *testing.T, reports map[string]*audit.Report) {
	t.Helper()
	hs := b.holders(t)
	for name, r := range reports {
		if r.OK() {
			continue
		}
		n, err := b.stores[name].OutboxLen(t.Context())
		t.Logf("%s: %d problems; lease %+v; outbox %d (%v); events %d", name, len(r.Problems), hs[name], n, err, r.Messages)
		for _, p := range b.all {
			var lines []string
			for _, l := range strings.Split(p.stderr.String(), "\n") {
				if strings.Contains(l, `"`+name+`"`) {
					lines = append(lines, l)
				}
			}
			t.Logf("%s about %s:\n%s", p.instance, name, strings.Join(lines[max(0, len(lines)-15):], "\n"))
		}
	}
}

// byAccount splits a stream's messages by the account their source names.
func byAccount(msgs []audit.Message) map[string][]audit.Message {
	out := map[string][]audit.Message{}
	for _, m := range msgs {
		a := strings.TrimPrefix(m.Event.Source, events.Source(""))
		out[a] = append(out[a], m)
	}
	return out
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
