package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// dedup remembers, in Redis, which event ids this consumer has handled, so an
// event delivered twice (a redelivery after a lost ack, or the poller resending it
// under a new stream sequence after JetStream's duplicate window) is handled once.
// Keys are per durable: two downstream services dedupe independently.
//
// The protocol, per event id:
//
//	claim:   SET <key> pending NX EX <ack wait>   won: handle it
//	                                              "done": a duplicate, ack it
//	                                              "pending": someone is handling it, retry later
//	done:    SET <key> done EX <ttl>              only after the handler succeeded
//	release: DEL <key> if still pending           the handler failed: let a retry claim it
//
// The crash window. The mark is written after the handler and before the ack:
//   - crash after the mark, before the ack: the redelivery finds "done" and is acked
//     without being handled again;
//   - crash after the handler, before the mark: the claim expires after the ack wait
//     and the redelivery is handled again. Handling is therefore at least once in
//     that narrow window, never lost. Marking before handling would close it the
//     other way, by losing the event on a crash: we prefer a repeat to a loss.
//
// So the handler must tolerate a repeat (this one does: applying the same event
// twice gives the same state). A handler whose effect is not naturally idempotent
// should write its effect and the mark in one transaction (Redis MULTI/EXEC, or a
// SQL transaction with the event id as a unique key), which closes the window.
//
// A dedup is safe for concurrent use.
type dedup struct {
	rdb      *redis.Client
	prefix   string        // e.g. "consumer-example:<durable>:event:"
	claimTTL time.Duration // the ack wait: a crashed claim expires when the message is redelivered
	doneTTL  time.Duration // how long a handled id is remembered
}

// claimResult is the outcome of a claim.
type claimResult int

const (
	claimed  claimResult = iota // ours to handle
	handled                     // handled before: a duplicate
	inFlight                    // claimed by another delivery right now
)

const (
	markPending = "pending"
	markDone    = "done"
)

// releaseScript deletes a claim only while it is still pending, never a done mark.
var releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func newDedup(rdb *redis.Client, durable string, claimTTL, doneTTL time.Duration) *dedup {
	return &dedup{rdb: rdb, prefix: "consumer-example:" + durable + ":event:", claimTTL: claimTTL, doneTTL: doneTTL}
}

// claim tries to take the event id for handling. Errors are Redis errors (transient).
func (d *dedup) claim(ctx context.Context, id string) (claimResult, error) {
	key := d.prefix + id
	for range 2 { // a claim that expires between SET NX and GET is retried once
		ok, err := d.rdb.SetNX(ctx, key, markPending, d.claimTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("claim event %s: %w", id, err)
		}
		if ok {
			return claimed, nil
		}
		v, err := d.rdb.Get(ctx, key).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			return 0, fmt.Errorf("read mark of event %s: %w", id, err)
		case v == markDone:
			return handled, nil
		}
		return inFlight, nil
	}
	return inFlight, nil
}

// done marks the event id handled.
func (d *dedup) done(ctx context.Context, id string) error {
	if err := d.rdb.Set(ctx, d.prefix+id, markDone, d.doneTTL).Err(); err != nil {
		return fmt.Errorf("mark event %s handled: %w", id, err)
	}
	return nil
}

// release gives up a claim after a failed handler, so the retry can claim it at once.
func (d *dedup) release(ctx context.Context, id string) error {
	if err := releaseScript.Run(ctx, d.rdb, []string{d.prefix + id}, markPending).Err(); err != nil {
		return fmt.Errorf("release claim of event %s: %w", id, err)
	}
	return nil
}
