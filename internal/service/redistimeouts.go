package service

import (
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
// makes the client honour its callers' deadlines (ContextTimeoutEnabled): a
// lease renewal, bound to the time the lease can still be vouched for, then
// fails by that deadline whatever the socket timeouts.
func redisTimeouts(opt *redis.Options, rawURL string, leaseTTL time.Duration) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("redis url: %w", err)
	}
	q := u.Query()
	d := leaseTTL / redisTimeoutShare
	if d <= 0 {
		return fmt.Errorf("redis timeouts: lease TTL %s: want > 0", leaseTTL)
	}
	for _, t := range []struct {
		param string
		v     *time.Duration
	}{{"dial_timeout", &opt.DialTimeout}, {"read_timeout", &opt.ReadTimeout}, {"write_timeout", &opt.WriteTimeout}} {
		if !q.Has(t.param) {
			*t.v = d
		}
	}
	opt.ContextTimeoutEnabled = true
	return nil
}
