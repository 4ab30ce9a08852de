package service

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// The client's dial, read and write timeouts are a quarter of the lease TTL
// unless redis_url sets them, on a node, a Cluster and Sentinel alike, and the
// client honours its callers' deadlines.
func TestRedisTimeoutsUnderTheLease(t *testing.T) {
	const ttl = 3 * time.Second
	quarter := ttl / 4
	cases := []struct {
		name              string
		url               string
		cluster, sentinel bool
		dial, read, write time.Duration
	}{
		{name: "defaults", url: "redis://127.0.0.1:1/0", dial: quarter, read: quarter, write: quarter},
		{name: "URL read timeout", url: "redis://127.0.0.1:1/0?read_timeout=7s", dial: quarter, read: 7 * time.Second, write: quarter},
		{name: "URL dial and write", url: "redis://127.0.0.1:1/0?dial_timeout=2s&write_timeout=4s", dial: 2 * time.Second, read: quarter, write: 4 * time.Second},
		{name: "cluster", url: "redis://127.0.0.1:1/0?read_timeout=6s", cluster: true, dial: quarter, read: 6 * time.Second, write: quarter},
		{name: "sentinel", url: "redis://127.0.0.1:1/0", sentinel: true, dial: quarter, read: quarter, write: quarter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := config.Settings{RedisURL: c.url, LeaseTTL: ttl}
			if c.cluster {
				s.RedisClusterAddrs = []string{"127.0.0.1:1"}
			}
			if c.sentinel {
				s.RedisSentinelAddrs, s.RedisSentinelMaster = []string{"127.0.0.1:1"}, "main"
			}
			rdb, err := connectRedis(s)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = rdb.Close() })
			var dial, read, write time.Duration
			var ctxTimeouts bool
			switch r := rdb.(type) {
			case *redis.ClusterClient:
				o := r.Options()
				dial, read, write, ctxTimeouts = o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.ContextTimeoutEnabled
			case *redis.Client:
				o := r.Options()
				dial, read, write, ctxTimeouts = o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.ContextTimeoutEnabled
			default:
				t.Fatalf("client %T", rdb)
			}
			if dial != c.dial || read != c.read || write != c.write || !ctxTimeouts {
				t.Errorf("dial %s, read %s, write %s, context timeouts %v; want %s, %s, %s, true", dial, read, write, ctxTimeouts, c.dial, c.read, c.write)
			}
		})
	}
}

// renewals is the store as leadership uses it, noting when each renewal that
// Redis accepted was sent: the lease lasts at least a TTL from then.
type renewals struct {
	*cursor.Store
	mu   sync.Mutex
	last time.Time
}

func (r *renewals) Renew(ctx context.Context, l cursor.Lease) error {
	sent := time.Now()
	err := r.Store.Renew(ctx, l)
	if err == nil {
		r.mu.Lock()
		r.last = sent
		r.mu.Unlock()
	}
	return err
}

func (r *renewals) lastSent() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// A Redis that stops answering (SIGSTOP: connections open, no reply) makes a
// leader of the smallest lease (3 s) on the service's client step down before
// its lease can expire: the renewal that hangs fails within TTL/3 of being
// sent, and the role turns to standby within 2/3 of the TTL after the last
// renewal Redis accepted; any other call fails within TTL/3 too, unless the URL
// sets a longer timeout. (With go-redis's own 5 s timeouts and 3 retries, the
// leader would work on for many seconds after its lease expired.)
func TestLeaderStepsDownWhenRedisHangs(t *testing.T) {
	rs := redistest.StartPrivate(t)
	const ttl = 3 * time.Second
	rdb, err := connectRedis(config.Settings{RedisURL: rs.URL, LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	store, err := cursor.New(rdb, "hung")
	if err != nil {
		t.Fatal(err)
	}
	leaser := &renewals{Store: store}
	var mu sync.Mutex
	var leading bool
	var steppedDown time.Time
	lead := poll.NewLeadership(leaser, "hung-1", ttl, zerolog.New(io.Discard), poll.WithRoleObserver(func(_ context.Context, leader bool) {
		mu.Lock()
		defer mu.Unlock()
		leading = leader
		if !leader {
			steppedDown = time.Now()
		}
	}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = lead.Run(ctx, func(ctx context.Context, _ func() cursor.Lease) error { <-ctx.Done(); return nil })
	}()
	t.Cleanup(func() { cancel(); <-done })
	simtest.WaitFor(t, 15*time.Second, "a renewal accepted", func() bool { return !leaser.lastSent().IsZero() })

	// A client whose connection was open when Redis stopped (a timed-out read
	// on it is retried).
	retrying, err := connectRedis(config.Settings{RedisURL: rs.URL + "?max_retries=10", LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = retrying.Close() })
	if err := retrying.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}

	rs.Pause(t)
	paused := time.Now()
	simtest.WaitFor(t, 30*time.Second, "the leader stepping down", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !leading
	})
	mu.Lock()
	down := steppedDown
	mu.Unlock()
	expiry := leaser.lastSent().Add(ttl)
	t.Logf("paused %s after the last accepted renewal; stepped down %s after the pause, %s before the lease could expire",
		paused.Sub(leaser.lastSent()), down.Sub(paused), expiry.Sub(down))
	if !down.Before(expiry) {
		t.Errorf("stepped down %s after the lease could expire (last renewal sent %s before)", down.Sub(expiry), down.Sub(leaser.lastSent()))
	}
	// Any call of a leader on the service's client, without a deadline of its
	// own, fails within TTL/3, whatever go-redis's retries of a timed-out read
	// (many here; slack for a loaded 2-core machine to wake the caller).
	start := time.Now()
	if err := retrying.Get(context.WithoutCancel(t.Context()), "any").Err(); err == nil {
		t.Fatal("a read on a stopped Redis succeeded")
	}
	took := time.Since(start)
	t.Logf("a read on the stopped Redis failed after %s", took)
	if took > ttl/3+350*time.Millisecond {
		t.Errorf("a call on a stopped Redis took %s, want at most about TTL/3 (%s)", took, ttl/3)
	}

	// A read timeout the URL gives is the operator's: a call waits that long.
	slow, err := connectRedis(config.Settings{RedisURL: rs.URL + "?read_timeout=2s", LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = slow.Close() })
	start = time.Now()
	if err := slow.Get(t.Context(), "any").Err(); err == nil {
		t.Fatal("a read on a stopped Redis succeeded")
	}
	if took := time.Since(start); took < 1900*time.Millisecond {
		t.Errorf("with read_timeout=2s in the URL a call on a stopped Redis failed after %s, want about 2s", took)
	}
}
