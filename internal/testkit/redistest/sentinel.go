package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the master name the sentinels of StartSentinel monitor.
const SentinelMaster = "callbus"

// Sentinel is Redis with Sentinel on loopback: a master, its replica and
// redis-sentinel processes (redis-server --sentinel) watching them. A failover
// swaps the two servers' roles; Master and Replica say who is which now.
type Sentinel struct {
	Servers   [2]*Server // master first at the start
	Sentinels []*Server
}

// downAfter is down-after-milliseconds: how long a silent master stays master.
const downAfter = 1000 * time.Millisecond

// StartSentinel runs a master, one replica and n sentinels (quorum n/2+1), all
// killed when the test ends, and returns once the sentinels know the replica.
func StartSentinel(t testing.TB, n int) *Sentinel {
	t.Helper()
	bin := Binary(t)
	master := StartWithArgs(t, "--repl-diskless-sync-delay", "0")
	replica := StartWithArgs(t, "--repl-diskless-sync-delay", "0", "--replicaof", "127.0.0.1", strconv.Itoa(master.port))
	s := &Sentinel{Servers: [2]*Server{master, replica}}
	for range n {
		s.Sentinels = append(s.Sentinels, startSentinel(t, bin, master.port, n/2+1))
	}
	waitUntil(t, "sentinels see the replica and each other", func() bool { return s.settled(n) })
	waitUntil(t, "replica in sync", func() bool { return linkUp(replica) })
	return s
}

// startSentinel runs one sentinel monitoring the master on masterPort.
func startSentinel(t testing.TB, bin string, masterPort, quorum int) *Server {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d %[3]d\nsentinel down-after-milliseconds %[1]s %[4]d\n"+
		"sentinel failover-timeout %[1]s 10000\nsentinel parallel-syncs %[1]s 1\n", SentinelMaster, masterPort, quorum, downAfter.Milliseconds())
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{dir: dir, conf: conf}
	s.start(t, bin, freePort(t))
	t.Cleanup(s.Stop)
	return s
}

// settled reports whether every sentinel knows the replica and the n-1 others.
func (s *Sentinel) settled(n int) bool {
	ctx := context.Background()
	for _, sn := range s.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		m, err := sc.Master(ctx, SentinelMaster).Result()
		_ = sc.Close()
		if err != nil || m["num-slaves"] != "1" || m["num-other-sentinels"] != strconv.Itoa(n-1) {
			return false
		}
	}
	return true
}

// Addrs are the sentinels' addresses.
func (s *Sentinel) Addrs() []string {
	out := make([]string, len(s.Sentinels))
	for i, sn := range s.Sentinels {
		out[i] = sn.Addr
	}
	return out
}

// Client returns a Sentinel-aware client (it asks the sentinels for the master
// and follows failovers), closed when the test ends.
func (s *Sentinel) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: SentinelMaster, SentinelAddrs: s.Addrs()})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Master returns the server that is master now (by ROLE).
func (s *Sentinel) Master(t testing.TB) *Server {
	t.Helper()
	for _, n := range s.Servers {
		if role(n) == "master" {
			return n
		}
	}
	t.Fatal("sentinel: no master")
	return nil
}

// Failover asks a sentinel to fail over (SENTINEL FAILOVER: the replica is
// promoted, the old master made its replica) and waits until it is done.
func (s *Sentinel) Failover(t testing.TB) {
	t.Helper()
	old := s.Master(t)
	do(t, s.Sentinels[0], "SENTINEL", "FAILOVER", SentinelMaster)
	s.waitSwitched(t, old)
}

// KillMaster kills the master (SIGKILL), waits until the sentinels promoted the
// replica, then starts the old master again, which they turn into the new
// master's replica. Writes the replica had not received are lost.
func (s *Sentinel) KillMaster(t testing.TB) {
	t.Helper()
	old := s.Master(t)
	old.Stop()
	waitUntil(t, "sentinels promote the replica", func() bool { return s.reported() != old.Addr && s.reported() != "" })
	old.Restart(t)
	s.waitSwitched(t, old)
}

// waitSwitched waits until every sentinel names the other server master and old
// replicates from it.
func (s *Sentinel) waitSwitched(t testing.TB, old *Server) {
	t.Helper()
	waitUntil(t, "sentinel failover done", func() bool {
		if role(old) != "slave" {
			return false
		}
		for _, sn := range s.Sentinels {
			if addrOf(sn) == old.Addr || addrOf(sn) == "" {
				return false
			}
		}
		return linkUp(old)
	})
}

// reported is the master address the first sentinel reports.
func (s *Sentinel) reported() string { return addrOf(s.Sentinels[0]) }

// addrOf asks one sentinel for the master's address.
func addrOf(sn *Server) string {
	sc := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
	defer sc.Close()
	a, err := sc.GetMasterAddrByName(context.Background(), SentinelMaster).Result()
	if err != nil || len(a) != 2 {
		return ""
	}
	return a[0] + ":" + a[1]
}
