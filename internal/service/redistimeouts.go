package service

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisTimeoutShare is the part of the lease TTL a Redis dial, read or write may
// take unless redis_url says otherwise: under a third, so that a renewal that
// hangs fails before the leader must step down (2/3 of the TTL after its last
// confirmed renewal) and a leader never works on past its lease unawares.
// go-redis's own defaults (5 s since 9.22) exceed the smallest lease (3 s).
const redisTimeoutShare = 4

// redisTimeouts sets the dial, read and write timeouts of opt to a quarter of
// the lease TTL, each unless rawURL (the redis_url opt was parsed from) sets it
// (dial_timeout, read_timeout, write_timeout: an operator's choice is kept), and
// makes the client honour its callers' deadlines (ContextTimeoutEnabled). It
// returns the budget of one call, retries included (see callBudget): a third of
// the lease TTL, or the longest of the three timeouts when the URL set one
// longer.
func redisTimeouts(opt *redis.Options, rawURL string, leaseTTL time.Duration) (time.Duration, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, fmt.Errorf("redis url: %w", err)
	}
	q := u.Query()
	d := leaseTTL / redisTimeoutShare
	if d <= 0 {
		return 0, fmt.Errorf("redis timeouts: lease TTL %s: want > 0", leaseTTL)
	}
	budget := leaseTTL / 3
	for _, t := range []struct {
		param string
		v     *time.Duration
	}{{"dial_timeout", &opt.DialTimeout}, {"read_timeout", &opt.ReadTimeout}, {"write_timeout", &opt.WriteTimeout}} {
		if !q.Has(t.param) {
			*t.v = d
		}
		budget = max(budget, *t.v)
	}
	opt.ContextTimeoutEnabled = true
	return budget, nil
}

// callBudget bounds every command and pipeline of a client to its duration,
// retries and waits for a pooled connection included, unless the caller's
// context ends sooner: go-redis retries a command that timed out (3 times by
// default), which would let one call outlive the lease several times over. It
// needs ContextTimeoutEnabled, which redisTimeouts sets. A blocking read (XREAD
// BLOCK) must block for less.
type callBudget time.Duration

func (b callBudget) DialHook(next redis.DialHook) redis.DialHook { return next }

func (b callBudget) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, cancel := b.bound(ctx)
		defer cancel()
		return next(ctx, cmd)
	}
}

func (b callBudget) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, cancel := b.bound(ctx)
		defer cancel()
		return next(ctx, cmds)
	}
}

// bound is ctx with the budget's deadline, or ctx itself when it ends sooner.
func (b callBudget) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= time.Duration(b) {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(b))
}
