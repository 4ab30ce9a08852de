package cursor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lease is the right to write the account's state, identified by a fencing token.
// Tokens handed out by Acquire strictly increase (see the package comment for the
// limit after Redis loses its data). A Lease is a value: Renew does not change it.
type Lease struct {
	Holder string        // who holds it: unique per process
	Token  int64         // fencing token, > 0
	TTL    time.Duration // the time to live Acquire set; Renew extends by it again
}

// Acquire takes the account's lease for holder with a new token when nobody holds
// it, setting it to expire after ttl. When holder already holds a live lease it is
// extended by ttl and keeps its token. When another holder has it, Acquire returns
// a *NotLeaderError (errors.Is ErrNotLeader) naming the holder and its remaining
// time. Other errors are Redis failures; the lease may or may not have been taken,
// which a later Acquire by the same holder resolves.
func (s *Store) Acquire(ctx context.Context, holder string, ttl time.Duration) (Lease, error) {
	if err := checkLeaseArgs(holder, ttl); err != nil {
		return Lease{}, fmt.Errorf("cursor acquire: %w", err)
	}
	// A new term: another may have written meanwhile, or Redis lost what this
	// store's last term committed.
	s.recent.forget()
	v, err := acquireScript.Run(ctx, s.rdb, []string{s.k.lease, s.k.seq, s.k.fence}, holder, ttl.Milliseconds()).Result()
	if err != nil {
		return Lease{}, fmt.Errorf("cursor acquire: %w", err)
	}
	r, err := replySlice(v)
	if err != nil {
		return Lease{}, fmt.Errorf("cursor acquire: %w", err)
	}
	if ok, _ := elem[int64](r, 0); ok == 1 {
		token, _ := elem[int64](r, 1)
		return Lease{Holder: holder, Token: token, TTL: ttl}, nil
	}
	return Lease{}, fmt.Errorf("cursor acquire: %w", notLeader(r))
}

// Renew extends the lease by l.TTL if it still holds l's holder and token. When it
// does not (it expired, or another holder took it), Renew returns a
// *NotLeaderError (errors.Is ErrNotLeader) and the caller must stop writing; its
// commits would be refused anyway.
func (s *Store) Renew(ctx context.Context, l Lease) error {
	if err := checkLeaseArgs(l.Holder, l.TTL); err != nil {
		return fmt.Errorf("cursor renew: %w", err)
	}
	v, err := renewScript.Run(ctx, s.rdb, []string{s.k.lease}, l.Holder, l.Token, l.TTL.Milliseconds()).Result()
	if err != nil {
		return fmt.Errorf("cursor renew: %w", err)
	}
	r, err := replySlice(v)
	if err != nil {
		return fmt.Errorf("cursor renew: %w", err)
	}
	if ok, _ := elem[int64](r, 0); ok == 1 {
		return nil
	}
	return fmt.Errorf("cursor renew: %w", notLeader(r))
}

// Release deletes the lease if it still holds l's holder and token, so another
// replica can take over without waiting for the TTL. It is idempotent: a lease
// that expired or passed to another holder is left alone and Release returns nil.
func (s *Store) Release(ctx context.Context, l Lease) error {
	s.recent.forget() // keeps no body while another leads
	if err := releaseScript.Run(ctx, s.rdb, []string{s.k.lease}, l.Holder, l.Token).Err(); err != nil {
		return fmt.Errorf("cursor release: %w", err)
	}
	return nil
}

// Leader returns the current holder of the lease, its token and remaining time to
// live; holder is "" (and err nil) when nobody holds it.
func (s *Store) Leader(ctx context.Context) (holder string, token int64, ttl time.Duration, err error) {
	var get *redis.SliceCmd
	var pttl *redis.DurationCmd
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HMGet(ctx, s.k.lease, "holder", "token")
		pttl = p.PTTL(ctx, s.k.lease)
		return nil
	})
	if err != nil {
		return "", 0, 0, fmt.Errorf("cursor leader: %w", err)
	}
	vals := get.Val()
	h, _ := vals[0].(string)
	t, _ := vals[1].(string)
	if h == "" {
		return "", 0, 0, nil
	}
	token, err = strconv.ParseInt(t, 10, 64)
	if err != nil {
		return "", 0, 0, fmt.Errorf("cursor leader: token %q: %w", t, err)
	}
	ttl = max(pttl.Val(), 0)
	return h, token, ttl, nil
}

func checkLeaseArgs(holder string, ttl time.Duration) error {
	if holder == "" {
		return fmt.Errorf("%w: empty lease holder", ErrInvalid)
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("%w: lease ttl %s below 1ms", ErrInvalid, ttl)
	}
	return nil
}

// notLeader translates the {0, holder, token, ttl_ms} reply of acquire and renew.
func notLeader(r []any) *NotLeaderError {
	holder, _ := elem[string](r, 1)
	token, _ := elem[int64](r, 2)
	ms, _ := elem[int64](r, 3)
	return &NotLeaderError{Holder: holder, Token: token, TTL: time.Duration(max(ms, 0)) * time.Millisecond}
}

// Holders returns the holder of each account's lease (accounts without a live
// lease are absent), in one pipelined read: the fleet's assignment keeps accounts
// where they are led (fleet.WithHolders).
func Holders(ctx context.Context, rdb redis.UniversalClient, accounts []string) (map[string]string, error) {
	cmds := make([]*redis.StringCmd, len(accounts))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, a := range accounts {
			cmds[i] = p.HGet(ctx, newKeys(a).lease, "holder")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("cursor holders: %w", err)
	}
	out := make(map[string]string, len(accounts))
	for i, c := range cmds {
		if h, err := c.Result(); err == nil && h != "" {
			out[accounts[i]] = h
		}
	}
	return out, nil
}
