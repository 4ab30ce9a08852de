package cursor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/redis/go-redis/v9"
)

// ReadOutbox returns up to count entries that come after the entry afterStreamID
// ("" for the first not acknowledged: see outboxTrimmed), oldest first. An entry
// is one event: a batch entry is read as its events (outbox_batch.go). afterStreamID need not exist any more (it
// may have been trimmed). Reading is not fenced: any replica may relay. The
// records' Data share one buffer per call: do not write into them. With
// WithOutboxCache, entries this store has just committed come from memory when
// Redis vouched for their place (see recent), and Redis still has them; such a
// read may return fewer than count while Redis holds more: read until a read
// returns none.
func (s *Store) ReadOutbox(ctx context.Context, afterStreamID string, count int) ([]event.Committed, error) {
	if count <= 0 {
		return nil, fmt.Errorf("cursor read outbox: %w: count %d", ErrInvalid, count)
	}
	if afterStreamID == "" {
		var err error
		if afterStreamID, err = s.outboxTrimmed(ctx); err != nil {
			return nil, fmt.Errorf("cursor read outbox: %w", err)
		}
	}
	if s.recent != nil {
		if recs, ok, err := s.readRecent(ctx, afterStreamID, count); ok || err != nil {
			return recs, err
		}
	}
	recs, err := s.readEntries(ctx, s.k.outbox, afterStreamID, count)
	if err != nil {
		return nil, fmt.Errorf("cursor read outbox: %w", err)
	}
	return recs, nil
}

// readEntries reads up to count entries of the outbox-shaped stream key after
// afterStreamID ("" from its start), raw first (readXRange), through go-redis
// when that cannot be used.
func (s *Store) readEntries(ctx context.Context, key, afterStreamID string, count int) ([]event.Committed, error) {
	start := "-"
	if afterStreamID != "" {
		if _, err := parseStreamID(afterStreamID); err != nil {
			return nil, err
		}
		start = "(" + afterStreamID
	}
	recs, ok, err := s.readXRange(ctx, key, afterStreamID, count)
	if err != nil || ok {
		return recs, err
	}
	msgs, err := s.rdb.XRangeN(ctx, key, start, "+", int64(count)).Result()
	if err != nil {
		return nil, err
	}
	if recs, err = toRecords(msgs); err != nil {
		return nil, err
	}
	return clip(recs, afterStreamID, count)
}

// outboxTrimmed is the newest id TrimOutbox acknowledged when a batch entry
// holding it is still in the outbox (its last event is not acknowledged), else
// "": the outbox's events not yet acknowledged come after it.
func (s *Store) outboxTrimmed(ctx context.Context) (string, error) {
	v, err := s.rdb.HGet(ctx, s.k.outboxMeta, "trimmed").Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if _, err := parseStreamID(v); err != nil {
		return "", fmt.Errorf("outbox:meta trimmed: %w", err)
	}
	return v, nil
}

// WaitOutbox is ReadOutbox that waits up to block (> 0) for entries when none
// comes after afterStreamID; it returns no records and no error when none came.
// Keep block short (a second or so): go-redis does not interrupt a blocked read
// when ctx is cancelled (nor at ctx's deadline unless the client was built with
// ContextTimeoutEnabled), so block bounds how long a shutdown waits for it.
func (s *Store) WaitOutbox(ctx context.Context, afterStreamID string, count int, block time.Duration) ([]event.Committed, error) {
	if count <= 0 {
		return nil, fmt.Errorf("cursor wait outbox: %w: count %d", ErrInvalid, count)
	}
	if block < time.Millisecond {
		// BLOCK 0 would wait forever.
		return nil, fmt.Errorf("cursor wait outbox: %w: block %s below 1ms", ErrInvalid, block)
	}
	if afterStreamID == "" {
		var err error
		if afterStreamID, err = s.outboxTrimmed(ctx); err != nil {
			return nil, fmt.Errorf("cursor wait outbox: %w", err)
		}
	}
	after := "0-0"
	if afterStreamID != "" {
		if _, err := parseStreamID(afterStreamID); err != nil {
			return nil, fmt.Errorf("cursor wait outbox: %w", err)
		}
		after = afterStreamID
	}
	streams, err := s.rdb.XRead(ctx, &redis.XReadArgs{
		Streams: []string{s.k.outbox, after},
		// About count events (see readXRange); fewer are fine here.
		Count: (int64(count) + max(s.perEntry.Load(), 1) - 1) / max(s.perEntry.Load(), 1),
		Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cursor wait outbox: %w", err)
	}
	var recs []event.Committed
	for _, st := range streams {
		r, err := toRecords(st.Messages)
		if err != nil {
			return nil, fmt.Errorf("cursor wait outbox: %w", err)
		}
		recs = append(recs, r...)
	}
	if recs, err = clip(recs, afterStreamID, count); err != nil {
		return nil, fmt.Errorf("cursor wait outbox: %w", err)
	}
	return recs, nil
}

// OutboxLen returns the number of events in the outbox: its entries, plus the
// events of its batch entries beyond their first (outbox:meta's more field, see
// lua/commit.lua). The events of a batch entry partly trimmed still count.
func (s *Store) OutboxLen(ctx context.Context) (int64, error) {
	var n *redis.IntCmd
	var more *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.XLen(ctx, s.k.outbox)
		more = p.HGet(ctx, s.k.outboxMeta, "more")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("cursor outbox len: %w", err)
	}
	return outboxEvents(n.Val(), more.Val()), nil
}

// outboxEvents is the outbox's events from its entries and outbox:meta's more.
func outboxEvents(entries int64, more string) int64 {
	m, _ := strconv.ParseInt(more, 10, 64)
	if entries == 0 || m < 0 {
		return entries
	}
	return entries + m
}

// OutboxOldest returns when the oldest entry still in the outbox was committed
// (from its stream id, by the Redis server's clock), and false when the outbox is
// empty: time.Since of it is the relay's lag.
func (s *Store) OutboxOldest(ctx context.Context) (time.Time, bool, error) {
	msgs, err := s.rdb.XRangeN(ctx, s.k.outbox, "-", "+", 1).Result()
	if err != nil {
		return time.Time{}, false, fmt.Errorf("cursor outbox oldest: %w", err)
	}
	if len(msgs) == 0 {
		return time.Time{}, false, nil
	}
	id, err := parseStreamID(msgs[0].ID)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("cursor outbox oldest: %w", err)
	}
	return id.time(), true, nil
}

// toRecords decodes entries as go-redis parsed them, a batch entry
// (outbox_batch.go) into one record per event.
func toRecords(msgs []redis.XMessage) ([]event.Committed, error) {
	recs := make([]event.Committed, 0, len(msgs))
	intern := func(b []byte) string { return string(b) }
	for _, m := range msgs {
		if batch, ok := m.Values[batchEventsField].(string); ok {
			n, _ := m.Values[batchCountField].(string)
			var err error
			if recs, err = decodeBatch(recs, m.ID, n, []byte(batch), intern); err != nil {
				return nil, err
			}
			continue
		}
		r, err := toRecord(m)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// toRecord decodes one outbox entry as go-redis parsed it (WaitOutbox; ReadOutbox
// reads the reply itself, see readXRange).
func toRecord(m redis.XMessage) (event.Committed, error) {
	str := func(f string) string { v, _ := m.Values[f].(string); return v }
	_, hasType := m.Values["type"]
	return entryFields{
		id: str("id"), subject: str("subject"), typ: events.Type(str("type")), at: str("time"),
		data: []byte(str("data")), headers: []byte(str("headers")), hasType: hasType,
	}.record(m.ID)
}

// entryFields are the values of one outbox entry as lua/commit.lua stores them;
// a missing field reads as empty.
type entryFields struct {
	id, subject string
	typ         events.Type
	at          string // RFC 3339
	data        []byte
	headers     []byte // JSON object of strings
	hasType     bool   // the entry stores a type: releases before type and time did not
}

// record decodes one outbox entry. Entries appended by releases that stored no
// type and time (only id, subject, data, headers) are still read: their type and
// time come from the body, decoded this once; a body that does not have them
// leaves them zero, and the entry is relayed all the same.
func (f entryFields) record(streamID string) (event.Committed, error) {
	id, err := parseStreamID(streamID)
	if err != nil {
		return event.Committed{}, fmt.Errorf("outbox entry: %w", err)
	}
	r := event.Committed{
		StreamID:    streamID,
		CommittedAt: id.time(),
		Message:     event.Message{ID: f.id, Subject: f.subject, Type: f.typ, Data: f.data},
	}
	if r.ID == "" || r.Subject == "" {
		return r, fmt.Errorf("outbox entry %s: missing id or subject", streamID)
	}
	if r.Headers, err = decodeHeaders(f.headers); err != nil {
		return r, fmt.Errorf("outbox entry %s: headers: %w", streamID, err)
	}
	if !f.hasType {
		_ = r.RestoreHead() // best effort: the body is relayed as it is either way
		return r, nil
	}
	if f.at != "" {
		if r.Time, err = time.Parse(time.RFC3339Nano, f.at); err != nil {
			return r, fmt.Errorf("outbox entry %s: time: %w", streamID, err)
		}
	}
	return r, nil
}
