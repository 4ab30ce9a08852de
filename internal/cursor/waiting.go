package cursor

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Look is what a leader asks the store between two poll cycles (Store.Look).
type Look struct {
	Notes  map[string]string // fields of the ops hash to write (NoteOps), none when empty
	Outbox bool              // read the outbox's length (OutboxLen)
	Queues bool              // look at the operators' requests and the resync runs
}

// Waiting is what Store.Look found.
type Waiting struct {
	Outbox   int64 // the outbox's events (OutboxLen), when Look.Outbox
	Requests int64 // operators' requests queued (TakeRequests takes them), when Look.Queues
	Resync   bool  // a resync run queued or under way (TakeResync takes it), when Look.Queues
}

// Look writes l.Notes and reads what l asks for in one round trip. A leader of
// a mostly idle account asks these between its cycles and at every idle wake;
// asked one command at a time they were four round trips a second per account,
// most of a replica's Redis work with thousands of accounts. Only the reads of
// the queues' lengths: taking what they hold is TakeRequests's and TakeResync's.
// Safe for concurrent use.
func (s *Store) Look(ctx context.Context, l Look) (Waiting, error) {
	if len(l.Notes) == 0 && !l.Outbox && !l.Queues {
		return Waiting{}, nil
	}
	var xlen, requests, running, queued *redis.IntCmd
	var more *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if len(l.Notes) > 0 {
			p.HSet(ctx, s.k.ops, l.Notes)
		}
		if l.Outbox {
			xlen = p.XLen(ctx, s.k.outbox)
			more = p.HGet(ctx, s.k.outboxMeta, "more")
		}
		if l.Queues {
			requests = p.LLen(ctx, s.k.requests)
			running = p.LLen(ctx, s.k.resyncRunning())
			queued = p.LLen(ctx, s.k.resyncQueue())
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) { // Nil: outbox:meta has no "more"
		return Waiting{}, fmt.Errorf("cursor look: %w", err)
	}
	var w Waiting
	if l.Outbox {
		w.Outbox = outboxEvents(xlen.Val(), more.Val())
	}
	if l.Queues {
		w.Requests, w.Resync = requests.Val(), running.Val()+queued.Val() > 0
	}
	return w, nil
}
