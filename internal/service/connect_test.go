package service

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/rs/zerolog"
)

// The service runs against a Redis Cluster (redis_cluster_addrs; redis_url's
// host unused) and a NATS server list whose first server is down: the poller
// leads, and its events reach the stream through the live server.
func TestServiceOnRedisClusterAndNATSServerList(t *testing.T) {
	cluster := redistest.StartCluster(t)
	ns := natstest.Start(t)
	w := newWorld(t, nil)
	dead := "nats://" + simtest.FreeAddr(t)
	set := testSettings(w, dead+","+ns.URL(), "redis://127.0.0.1:1/0", "cluster-1")
	set.RedisClusterAddrs = cluster.Options().Addrs
	r := start(t, w, set, zerolog.New(io.Discard))
	t.Cleanup(func() { r.stop(t) })
	r.advance(t, 5)
	simtest.WaitFor(t, 30*time.Second, "call events in the stream", func() bool {
		for _, m := range readStream(t, ns) {
			if strings.HasPrefix(m.Subject, "callcenter.acme.call.") {
				return true
			}
		}
		return false
	})
	if n, err := cluster.Exists(t.Context(), "callbus:{acme}:lease").Result(); err != nil || n != 1 {
		t.Errorf("lease on the Cluster: %d keys, %v", n, err)
	}
}

// Several NATS URLs reach the connection as its server list, credentials kept
// out of the URLs given.
func TestConnectNATSServerList(t *testing.T) {
	ns := natstest.Start(t)
	dead := "nats://" + simtest.FreeAddr(t)
	set := testSettings(&simtest.World{URL: "http://127.0.0.1:1"}, dead+","+ns.URL(), "redis://127.0.0.1:1/0", "i-1")
	nc, err := connectNATS(t.Context(), set, zerolog.New(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	servers := nc.Servers()
	for _, want := range []string{dead, ns.URL()} {
		if !slices.Contains(servers, want) {
			t.Errorf("servers %v lack %s", servers, want)
		}
	}
	simtest.WaitFor(t, 10*time.Second, "connected", nc.IsConnected)
	if got := nc.ConnectedUrl(); got != ns.URL() {
		t.Errorf("connected to %s, want the live %s", got, ns.URL())
	}
}

// The service runs against Redis with Sentinel (redis_sentinel_addrs and
// redis_sentinel_master; redis_url's host unused) and follows a failover: after
// the Sentinels promote the replica, this replica leads again and events keep
// reaching the stream.
func TestServiceOnRedisSentinel(t *testing.T) {
	sentinel := redistest.StartSentinel(t, 1)
	ns := natstest.Start(t)
	w := newWorld(t, nil)
	set := testSettings(w, ns.URL(), "redis://127.0.0.1:1/0", "sentinel-1")
	set.RedisSentinelAddrs, set.RedisSentinelMaster = sentinel.Addrs(), redistest.SentinelMaster
	set.HTTPAddr = simtest.FreeAddr(t)
	r := &served{running: start(t, w, set, zerolog.New(io.Discard)), s: set}
	t.Cleanup(func() { r.stop(t) })
	calls := func() int {
		n := 0
		for _, m := range readStream(t, ns) {
			if strings.HasPrefix(m.Subject, "callcenter.acme.call.created") {
				n++
			}
		}
		return n
	}
	r.advance(t, 5)
	simtest.WaitFor(t, 30*time.Second, "call events before the failover", func() bool { return calls() > 0 })
	before := calls()
	sentinel.Failover(t)
	simtest.WaitFor(t, 60*time.Second, "more call events after the failover", func() bool {
		r.advance(t, 1)
		return calls() > before
	})
	var st Status
	if err := decodeStatus(r.get(t, "/status?format=json", ""), &st); err != nil || st.Role != "leader" {
		t.Errorf("after the failover the role is %q (%v), want leader", st.Role, err)
	}
}
