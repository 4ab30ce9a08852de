package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/redis/go-redis/v9"
)

// store keeps the view in Redis and commits each event's change together with its
// done mark, in one MULTI/EXEC guarded by WATCH: either both are written or
// neither, whatever crashes when. Every replica reads and writes the same keys, so
// each serves the whole state. It is safe for concurrent use.
//
// Keys, under consumer-example:<durable>: (the done mark's name is unchanged since
// the in-memory version, so marks written by it still count):
//
//	event:<id>                  the stream sequence it was committed at, for --dedup-ttl
//	claim:<id>                  the replica handling the event now (see claims)
//	agent:<user id>             an agent (JSON); a deleted one stays as a tombstone
//	agents                      set of the ids of live agents
//	call:<call id>              an open call (JSON); an ended one stays as a tombstone
//	call:<call id>:participants set of its participant ids
//	participant:<call>:<id>     a participant of an open call (JSON)
//	calls                       set of the ids of open calls
//	applied                     stream of the events applied, in commit order
//
// Done marks. A delivery of an event whose mark names its own sequence (a
// redelivery), or no sequence, is a duplicate. A copy at another sequence (the
// relay's resend) is a duplicate too unless the record moved on from the first
// copy: then the relay withdrew what followed that copy and published it again,
// and the copy is applied in its new place (version.newerThan), so the record ends
// as the stream's last event of the entity says.
//
// Per-entity order is the stream's: callbus publishes one entity's events in the
// order it observed them, and that order is the contract. Each record stores the
// version (stream sequence) of the last event applied to it. An event whose
// sequence is not higher is not applied, only marked done: it is superseded,
// because every event carries the entity's whole new state. The event's time is
// not an order: it is the record's own date (call.ended is dated by the last
// participant's end, often before the call.updated published just before it), so
// ordering by it would drop a call's end. Two replicas handling two events of one entity at
// once cannot interleave: the second EXEC fails on the WATCHed record, and is
// retried against the first one's result.
type store struct {
	rdb     *redis.Client
	prefix  string
	doneTTL time.Duration
}

func newStore(rdb *redis.Client, durable string, doneTTL time.Duration) *store {
	return &store{rdb: rdb, prefix: "consumer-example:" + durable + ":", doneTTL: doneTTL}
}

func (s *store) key(parts ...any) string {
	k := s.prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += fmt.Sprint(p)
	}
	return k
}

// appliedLogLen bounds the applied stream (approximately).
const appliedLogLen = 100_000

// maxTxAttempts bounds the retries of a commit that lost a race on its keys.
const maxTxAttempts = 20

// outcome is what a commit did with an event.
type outcome string

const (
	applied    outcome = "applied"    // the view changed (or would have: same state) and the event is marked
	superseded outcome = "superseded" // a newer event of the entity was applied first: marked only
	duplicate  outcome = "duplicate"  // marked before: nothing written
	ignored    outcome = "ignored"    // a type the view does not apply: nothing written
)

// version places an event in its entity's order: its stream sequence (for a
// replayed dead letter, the sequence it had first). Time is the event's time,
// kept for display only. ResendOf, on a copy of an event already applied at
// another sequence, is that sequence.
type version struct {
	Time     time.Time `json:"time"`
	Seq      uint64    `json:"seq"`
	ResendOf uint64    `json:"-"`
}

// newerThan orders by stream sequence alone, never by time (see store). A resent
// copy is newer only when the record moved on from its first copy: the relay
// withdrew what followed the first copy and published the entity's events again,
// and this copy's place in the stream is the one that counts.
func (v version) newerThan(o version) bool {
	return v.Seq > o.Seq && (v.ResendOf == 0 || o.Seq != v.ResendOf)
}

// change is one event's effect, planned from the current records: the writes, a
// summary line, or superseded when the records are newer than the event.
type change struct {
	superseded bool
	line       string
	write      func(ctx context.Context, p redis.Pipeliner)
}

// planner reads the records an event touches (within the WATCH) and plans its
// change; resendOf is the sequence at which a copy of the event was committed
// before (0: none), for version.ResendOf.
type planner func(ctx context.Context, tx *redis.Tx, resendOf uint64) (change, error)

// commit applies the event delivered at stream sequence seq, and marks its id done,
// atomically. It returns the outcome and the change's summary line ("" for none).
// Errors are Redis errors (transient) or errPoison for data the view cannot use.
func (s *store) commit(ctx context.Context, ev events.Event, seq uint64) (outcome, string, error) {
	md := ev.Metadata()
	keys, plan, err := s.plan(ev, version{Time: md.Time, Seq: seq})
	if err != nil || plan == nil {
		return ignored, "", err
	}
	mark := s.key("event", md.ID)
	var out outcome
	var line string
	txf := func(tx *redis.Tx) error {
		resendOf, err := doneAt(ctx, tx, mark)
		if err != nil || resendOf == seq || resendOf == doneSomewhere {
			out = duplicate
			return err
		}
		c, err := plan(ctx, tx, resendOf)
		if err != nil {
			return err
		}
		out, line = applied, c.line
		switch {
		case c.superseded && resendOf != 0:
			out, line = duplicate, "" // the record holds this event's first copy, or later ones
		case c.superseded:
			out = superseded
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if !c.superseded {
				c.write(ctx, p)
				p.XAdd(ctx, &redis.XAddArgs{Stream: s.key("applied"), MaxLen: appliedLogLen, Approx: true,
					Values: []any{"seq", seq, "entity", md.Subject, "id", md.ID, "type", string(md.Type)}})
			}
			p.Set(ctx, mark, seq, s.doneTTL)
			return nil
		})
		return err
	}
	for range maxTxAttempts {
		err := s.rdb.Watch(ctx, txf, append(keys, mark)...)
		if !errors.Is(err, redis.TxFailedErr) {
			if err != nil {
				return "", "", fmt.Errorf("commit event %s: %w", md.ID, err)
			}
			return out, line, nil
		}
	}
	return "", "", fmt.Errorf("commit event %s: its keys kept changing (%d attempts)", md.ID, maxTxAttempts)
}

// doneSomewhere is doneAt's answer for a mark without a sequence ("done", as
// written before marks held one).
const doneSomewhere = math.MaxUint64

// doneAt returns the stream sequence at which the event of mark was committed:
// 0 when it was not, doneSomewhere when its mark does not say.
func doneAt(ctx context.Context, tx *redis.Tx, mark string) (uint64, error) {
	v, err := tx.Get(ctx, mark).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if seq, err := strconv.ParseUint(v, 10, 64); err == nil && seq > 0 {
		return seq, nil
	}
	return doneSomewhere, nil
}

// getJSON reads the record at key into v; false when there is none.
func getJSON(ctx context.Context, tx *redis.Tx, key string, v any) (bool, error) {
	b, err := tx.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("record %s: %w", key, err)
	}
	return true, nil
}

// mustJSON encodes a record; the records are plain structs that always encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
