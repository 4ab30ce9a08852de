package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Account is one account the source lists; Digest changes whenever its settings
// do, and a work runs with the settings of one Digest.
type Account struct{ Name, Digest string }

// Defaults of the options.
const (
	DefaultTTL           = 10 * time.Second // 2/3 of the default lease TTL (lease_ttl_seconds 15)
	DefaultName          = "callbus"
	DefaultCheckInterval = time.Second
)

// restartDelay is the first wait before a work that returned on its own (an
// error, or nil while the account is still this replica's) runs again; it doubles
// up to maxRestartDelay, and starts over once a work ran longer than that.
const (
	restartDelay    = time.Second
	maxRestartDelay = 30 * time.Second
)

// Fleet keeps this replica's membership of a fleet in Redis and runs the work of
// the accounts rendezvous hashing gives it. Members, Owned and Run are safe for
// concurrent use; Run runs once.
type Fleet struct {
	rdb     redis.UniversalClient
	replica string
	log     zerolog.Logger
	ttl     time.Duration
	check   time.Duration
	name    string
	holders Holders // nil: rendezvous hashing alone (Owner)

	mu      sync.Mutex
	members []Member // sorted by name
	works   map[string]*work
	running bool
}

// Option sets an optional parameter of New.
type Option func(*Fleet)

// WithTTL sets the membership's time to live (default DefaultTTL): a replica that
// stops heartbeating (every TTL/3) leaves the fleet after it. Keep it at most the
// lease TTL; at most 2/3 of it (less the check interval) for the fastest failover:
// a lease renewed every lease TTL/3 outlives its dead holder by at least 2/3 of
// its TTL, so the new owner is then known, and its leadership waiting, before
// the lease expires.
func WithTTL(ttl time.Duration) Option { return func(f *Fleet) { f.ttl = ttl } }

// WithName sets the fleet's name (default DefaultName): replicas of one fleet
// share it; fleets sharing a Redis need distinct names.
func WithName(name string) Option {
	return func(f *Fleet) { f.name = name }
}

// WithCheckInterval sets how often Run reads the accounts and the live members
// (default DefaultCheckInterval, at most TTL/3): how soon a change is acted on.
func WithCheckInterval(d time.Duration) Option { return func(f *Fleet) { f.check = d } }

// New returns the Fleet of replica (a name unique in the fleet, e.g. the instance
// id) on rdb: a plain client, a Redis Cluster or a Sentinel-backed one. It does no
// I/O; Run joins the fleet. It refuses an empty replica or name, names with braces
// or spaces (they go in a Redis key), and a TTL under 30 ms.
func New(rdb redis.UniversalClient, replica string, log zerolog.Logger, opts ...Option) (*Fleet, error) {
	f := &Fleet{rdb: rdb, replica: replica, log: log, ttl: DefaultTTL, check: DefaultCheckInterval,
		name: DefaultName, works: map[string]*work{}}
	for _, o := range opts {
		o(f)
	}
	switch {
	case rdb == nil:
		return nil, errors.New("fleet: no Redis client")
	case badName(replica):
		return nil, fmt.Errorf("fleet: replica %q: want a non-empty name without braces, spaces or control characters", replica)
	case badName(f.name):
		return nil, fmt.Errorf("fleet: name %q: want a non-empty name without braces, spaces or control characters", f.name)
	case f.ttl < 30*time.Millisecond:
		return nil, fmt.Errorf("fleet: TTL %s: want at least 30ms", f.ttl)
	}
	if f.check <= 0 || f.check > f.ttl/3 {
		f.check = f.ttl / 3
	}
	return f, nil
}

func badName(s string) bool {
	return s == "" || strings.ContainsAny(s, "{}") || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// Members returns the live members as last read from Redis, sorted (empty before
// Run first reached Redis). Meant for /status.
func (f *Fleet) Members() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, len(f.members))
	for i, m := range f.members {
		names[i] = m.Name
	}
	return names
}

// liveMembers returns the live members with their joined times, sorted by name.
func (f *Fleet) liveMembers() []Member {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.members)
}

// Owned returns, sorted, the accounts whose work this replica runs now and keeps
// running (not those being handed off).
func (f *Fleet) Owned() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var owned []string
	for name, w := range f.works {
		if !w.stopping {
			owned = append(owned, name)
		}
	}
	slices.Sort(owned)
	return owned
}
