package fleet

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// waitLimit bounds every wait for a condition; only a failure waits that long.
const waitLimit = 15 * time.Second

// source is a mutable list of accounts, as a directory watcher gives.
type source struct {
	mu   sync.Mutex
	list map[string]string // name → digest
}

func newSource(names ...string) *source {
	s := &source{list: map[string]string{}}
	for _, n := range names {
		s.list[n] = "v1"
	}
	return s
}

func (s *source) set(name, digest string) { s.mu.Lock(); s.list[name] = digest; s.mu.Unlock() }
func (s *source) remove(name string)      { s.mu.Lock(); delete(s.list, name); s.mu.Unlock() }

func (s *source) accounts() []Account {
	s.mu.Lock()
	defer s.mu.Unlock()
	var as []Account
	for n, d := range s.list {
		as = append(as, Account{Name: n, Digest: d})
	}
	return as
}

// recorder records the works of every replica of a test.
type recorder struct {
	mu      sync.Mutex
	running map[string]map[string]int // account → replica → works running
	starts  map[string]int            // account → works started
	overlap []string                  // works started while another ran for the account
}

func newRecorder() *recorder {
	return &recorder{running: map[string]map[string]int{}, starts: map[string]int{}}
}

// work is a work that runs until its context ends, as a leader's session does.
func (r *recorder) work(replica string) func(context.Context, string) error {
	return func(ctx context.Context, account string) error {
		r.mu.Lock()
		if len(r.running[account]) > 0 {
			r.overlap = append(r.overlap, fmt.Sprintf("%s started on %s while running on %v", account, replica, r.running[account]))
		}
		if r.running[account] == nil {
			r.running[account] = map[string]int{}
		}
		r.running[account][replica]++
		r.starts[account]++
		r.mu.Unlock()
		<-ctx.Done()
		r.mu.Lock()
		if r.running[account][replica]--; r.running[account][replica] == 0 {
			delete(r.running[account], replica)
		}
		if len(r.running[account]) == 0 {
			delete(r.running, account)
		}
		r.mu.Unlock()
		return nil
	}
}

// snapshot returns, for every account run by exactly one work, the replica
// running it ("" when several run it), and how often each account started.
func (r *recorder) snapshot() (running map[string]string, starts map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	running = map[string]string{}
	for a, on := range r.running {
		for replica, n := range on {
			if len(on) == 1 && n == 1 {
				running[a] = replica
			} else {
				running[a] = ""
			}
		}
	}
	return running, maps.Clone(r.starts)
}

func (r *recorder) overlaps() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.overlap)
}

// member is one replica's Fleet running in the background.
type member struct {
	*Fleet
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// fleetName is a fleet name of the test's own, so tests can share a Redis.
func fleetName(t testing.TB) string {
	return strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
}

// join runs replica's Fleet with the accounts of src and the works of rec until
// the test ends (or leave). Its log goes to log.
func join(t testing.TB, rdb redis.UniversalClient, replica string, src *source, rec *recorder, log *simtest.Buffer, opts ...Option) *member {
	t.Helper()
	return joinWith(t, rdb, replica, src, rec.work(replica), log, opts...)
}

// joinWith is join with the works of work.
func joinWith(t testing.TB, rdb redis.UniversalClient, replica string, src *source, work func(context.Context, string) error, log *simtest.Buffer, opts ...Option) *member {
	t.Helper()
	opts = append([]Option{WithName(fleetName(t))}, opts...)
	f, err := New(rdb, replica, zerolog.New(log).With().Str("replica", replica).Logger(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{Fleet: f, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- f.Run(ctx, src.accounts, work) }()
	t.Cleanup(func() { m.leave(t) })
	return m
}

// leave stops the member gracefully and waits for Run to return.
func (m *member) leave(t testing.TB) {
	t.Helper()
	m.once.Do(func() {
		m.cancel()
		select {
		case err := <-m.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Errorf("Run did not return %s after its context ended", waitLimit)
		}
	})
}

// converged reports whether every account of src runs on its rendezvous owner
// among replicas, and every member sees exactly replicas.
func converged(src *source, rec *recorder, replicas []string, ms ...*member) bool {
	running, _ := rec.snapshot()
	accounts := src.accounts()
	if len(running) != len(accounts) {
		return false
	}
	for _, a := range accounts {
		if running[a.Name] != Owner(a.Name, replicas) {
			return false
		}
	}
	want := slices.Sorted(slices.Values(replicas))
	for _, m := range ms {
		if !slices.Equal(m.Members(), want) {
			return false
		}
	}
	return true
}

// dumpOnFailure prints the fleet's log when the test failed.
func dumpOnFailure(t testing.TB, log *simtest.Buffer) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("fleet log:\n%s", log.String())
		}
	})
}
