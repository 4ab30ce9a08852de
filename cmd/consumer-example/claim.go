package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// claims keep two replicas from handling one event at the same time: the same
// event can be delivered twice at once when the poller resends it under a new
// stream sequence. A claim is claim:<id> = the holder's token, set with SET NX PX
// <ttl>; the holder renews it every ttl/3 while the work runs, so it lasts as long
// as the work and ends within ttl (at most maxClaimTTL, far less than an ack wait)
// after the holder dies: the redelivery of a dead replica's message finds it free.
// A delivery that finds the claim held waits for it (process.waitClaim) rather
// than giving its delivery back. The done mark, not the claim,
// is what makes a commit happen once (see store); claims only avoid doing the work
// twice. A claims is safe for concurrent use.
type claims struct {
	store *store
	ttl   time.Duration
}

// maxClaimTTL bounds how long a claim outlives a replica that died holding it.
const maxClaimTTL = 6 * time.Second

// claimTTL is the claims' ttl for an ack wait: maxClaimTTL, or the ack wait when
// shorter (a claim never outlives the message's own ack wait).
func claimTTL(ackWait time.Duration) time.Duration { return min(ackWait, maxClaimTTL) }

// beat is how often a holder renews its claim: three renewals per ttl, so one
// late renewal does not lose it.
func (c *claims) beat() time.Duration { return c.ttl / 3 }

// Scripts that touch a claim only while the caller still holds it.
var (
	renewScript   = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
	releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
)

// claim takes the event for token. held is false when another holder has it.
func (c *claims) claim(ctx context.Context, id, token string) (held bool, err error) {
	ok, err := c.store.rdb.SetNX(ctx, c.store.key("claim", id), token, c.ttl).Result()
	if err != nil {
		return false, fmt.Errorf("claim event %s: %w", id, err)
	}
	return ok, nil
}

// renew extends the claim by its ttl; false when it was lost (expired and taken).
func (c *claims) renew(ctx context.Context, id, token string) (bool, error) {
	n, err := renewScript.Run(ctx, c.store.rdb, []string{c.store.key("claim", id)}, token, c.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("renew claim of event %s: %w", id, err)
	}
	return n == 1, nil
}

// release gives the claim up, so that a retry can take it at once.
func (c *claims) release(ctx context.Context, id, token string) error {
	if err := releaseScript.Run(ctx, c.store.rdb, []string{c.store.key("claim", id)}, token).Err(); err != nil {
		return fmt.Errorf("release claim of event %s: %w", id, err)
	}
	return nil
}
