package publish

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/streamread"
	"github.com/nats-io/nats.go/jetstream"
)

// reconcileMargin is how far before the oldest outbox entry reconcile reads the
// stream: Redis and NATS clocks may differ.
const reconcileMargin = 10 * time.Minute

// stored is an outbox entry found in the stream.
type stored struct {
	event string // its Nats-Msg-Id (event.MsgID of its event id)
	seq   uint64 // its stream sequence
}

// reconcile makes the outbox agree with the stream before the relay publishes
// again; Run calls it at start (a leader term's start), after any failure and
// after the NATS connection came back, so the relay never relies on JetStream's
// duplicate window alone (an entry older than the window would be stored twice)
// nor on what the stream once acknowledged (a server that lost power, or whose
// store was restored from an older copy, lost it). It reads this account's
// messages stored since shortly before the oldest entry kept was committed
// (Callbus-Outbox-Id header), then walks the acknowledged entries kept
// (Outbox.ReadAcked) and the outbox, in order:
//
//   - it trims the longest prefix of the outbox whose entries are all in the
//     stream;
//   - an acknowledged entry the stream no longer holds makes the relay publish
//     again from it (healing: the same event ids), before the outbox;
//   - it withdraws (deletes from the stream) every later entry stored ahead of
//     the first missing one (a publish failed while later ones in flight did
//     not), so that the stream keeps outbox order, and counts the withdrawal in
//     the store first: the entry is published again in its place, under a
//     message id the duplicate window has not seen (event.MsgID), by this
//     process or whichever relays after it.
//
// An id the stream holds for another event (Redis lost data and reused ids) is
// neither trimmed nor withdrawn. It also refreshes the stream's limits, and sets
// r.start to where publishing resumes.
func (r *Relay) reconcile(ctx context.Context) error {
	if r.reconnects != nil {
		r.seen = r.reconnects() // before reading: a later reconnection is noticed
	}
	r.start = flight{}
	s, err := r.streams.Stream(ctx, r.cfg.Stream)
	if err != nil {
		return fmt.Errorf("reconcile: stream %s: %w", r.cfg.Stream, err)
	}
	info := s.CachedInfo().Config
	state := s.CachedInfo().State
	r.stream, r.maxMsg = s, int64(info.MaxMsgSize)
	if r.cfg.Filter == "" {
		return nil
	}
	if r.withdrawn, err = r.outbox.OutboxWithdrawals(ctx); err != nil {
		return fmt.Errorf("reconcile: read withdrawals: %w", err)
	}
	head, err := r.oldest(ctx)
	if err != nil || head == nil {
		return err
	}
	published, lastID, err := r.publishedSince(ctx, s, head.CommittedAt.Add(-reconcileMargin), head.StreamID)
	if err != nil {
		return err
	}
	c, err := r.compare(ctx, published, lastID, limitsRemoved(info, state))
	if err != nil {
		return err
	}
	if c.trimmed > 0 {
		if err := r.outbox.TrimOutbox(ctx, c.upTo); err != nil {
			return fmt.Errorf("reconcile: trim outbox to %s: %w", c.upTo, err)
		}
		r.Stats.Skipped.Add(int64(c.trimmed))
		r.log.Info().Int("entries", c.trimmed).Str("outbox_id", c.upTo).Msg("relay: skipped outbox entries already in the stream")
	}
	if len(c.ahead) > 0 {
		if err := r.withdraw(ctx, c.aheadIDs); err != nil {
			return err
		}
		for _, seq := range c.ahead {
			if err := s.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
				return fmt.Errorf("reconcile: withdraw stream sequence %d: %w", seq, err)
			}
			r.Stats.Withdrawn.Add(1)
		}
		r.log.Warn().Int("messages", len(c.ahead)).Msg("relay: withdrew events stored ahead of a missing one; they are published again after it")
	}
	if c.heal {
		r.log.Error().Str("after_outbox_id", c.resume).
			Msg("relay: the stream lost events it had acknowledged (a NATS server lost power or its store went back to an older copy); publishing them again from the outbox's retention")
		r.start = flight{next: c.resume, heal: true}
	}
	return nil
}

// withdraw counts one more withdrawal of each entry (outbox ids) in the store,
// and in r.withdrawn.
func (r *Relay) withdraw(ctx context.Context, ids []string) error {
	n, err := r.outbox.WithdrawOutbox(ctx, ids)
	if err != nil {
		return fmt.Errorf("reconcile: count withdrawals: %w", err)
	}
	for id, k := range n {
		r.withdrawn[id] = k
	}
	return nil
}

// oldest is the oldest entry kept, acknowledged or not; nil when there is none.
func (r *Relay) oldest(ctx context.Context) (*event.Committed, error) {
	for _, read := range []func(context.Context, string, int) ([]event.Committed, error){r.outbox.ReadAcked, r.outbox.ReadOutbox} {
		recs, err := read(ctx, "", 1)
		if err != nil {
			return nil, fmt.Errorf("reconcile: read outbox: %w", err)
		}
		if len(recs) > 0 {
			return &recs[0], nil
		}
	}
	return nil, nil
}

// comparison is what compare found.
type comparison struct {
	trimmed  int      // outbox entries of the prefix found in the stream
	upTo     string   // the last of them
	heal     bool     // an acknowledged entry is missing from the stream
	resume   string   // then: the acknowledged entry before the first missing one ("" none)
	ahead    []uint64 // stream sequences of entries stored after the first missing one
	aheadIDs []string // and their outbox ids
}

// limitsRemoved is the time before which acknowledged entries missing from the
// stream left it by its limits, not by a loss: those older than its max age
// (with reconcileMargin), and, on a stream with max_msgs or max_bytes that
// removed messages from its head (first sequence past 1), those committed
// before its first message was stored (those limits discard the oldest; a loss
// takes the newest, so a stream that lost some still begins where it began,
// or, lost whole, at sequence 1 again). Without the second, a stream whose
// limits hold less than the retention would get the events they removed
// published again, at every term's start.
func limitsRemoved(cfg jetstream.StreamConfig, state jetstream.StreamState) time.Time {
	var t time.Time
	if cfg.MaxAge > 0 {
		t = time.Now().Add(-(cfg.MaxAge - reconcileMargin))
	}
	if (cfg.MaxMsgs > 0 || cfg.MaxBytes > 0) && state.Msgs > 0 && state.FirstSeq > 1 && state.FirstTime.After(t) {
		t = state.FirstTime
	}
	return t
}

// compare walks the acknowledged entries kept, then the outbox, against
// published. The walk ends after lastID, the newest entry the stream holds,
// once it knows whether an acknowledged entry is missing: nothing after lastID
// can be ahead. Acknowledged entries committed before removed (limitsRemoved)
// left it by its limits, not by a loss.
func (r *Relay) compare(ctx context.Context, published map[string]stored, lastID string, removed time.Time) (comparison, error) {
	var c comparison
	gap, passed := false, lastID == ""
	for _, src := range []struct {
		read  func(context.Context, string, int) ([]event.Committed, error)
		acked bool
	}{{r.outbox.ReadAcked, true}, {r.outbox.ReadOutbox, false}} {
		after := ""
		for {
			recs, err := src.read(ctx, after, r.cfg.Batch)
			if err != nil {
				return c, fmt.Errorf("reconcile: read outbox: %w", err)
			}
			for _, rec := range recs {
				p, ok := published[rec.StreamID]
				in := ok && event.MsgIDEvent(p.event) == rec.ID
				switch {
				case !in && src.acked && rec.CommittedAt.Before(removed):
					// removed by the stream's limits, or about to be
				case in && !gap && src.acked:
					c.resume = rec.StreamID
				case in && !gap:
					c.trimmed, c.upTo = c.trimmed+1, rec.StreamID
				case in:
					c.ahead, c.aheadIDs = append(c.ahead, p.seq), append(c.aheadIDs, rec.StreamID)
				default:
					c.heal = c.heal || (src.acked && !gap)
					gap = true
				}
				passed = passed || rec.StreamID == lastID
				if passed && (gap || !src.acked) {
					return c, nil
				}
			}
			if len(recs) < r.cfg.Batch {
				break
			}
			after = recs[len(recs)-1].StreamID
		}
	}
	return c, nil
}

// publishedSince maps the outbox id of each message of this account stored in s
// since the given time (up to the stream's end) to its message id and sequence, and
// returns the outbox id of the last one ("" when none). Messages of entries
// before head, the oldest entry kept, are left out: they were trimmed, and
// the read covers every message since some minutes before head was committed (a
// whole backlog's, after a fast run), which memory need not hold.
func (r *Relay) publishedSince(ctx context.Context, s jetstream.Stream, since time.Time, head string) (map[string]stored, string, error) {
	out := map[string]stored{}
	last := ""
	err := streamread.Read(ctx, s, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{r.cfg.Filter}, DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &since,
		HeadersOnly: true,
	}, func(m jetstream.Msg, md *jetstream.MsgMetadata) error {
		if id := m.Headers().Get(HeaderOutboxID); id != "" && !outboxBefore(id, head) {
			out[id] = stored{event: m.Headers().Get(events.HeaderID), seq: md.Sequence.Stream}
			last = id
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("reconcile: read the stream: %w", err)
	}
	return out, last, nil
}

// outboxBefore reports whether outbox id a ("<ms>-<seq>", a Redis stream id)
// comes before b; false when either is not such an id (kept, to be safe).
func outboxBefore(a, b string) bool {
	am, as, ok1 := splitOutboxID(a)
	bm, bs, ok2 := splitOutboxID(b)
	if !ok1 || !ok2 {
		return false
	}
	return am < bm || (am == bm && as < bs)
}

func splitOutboxID(id string) (ms, seq uint64, ok bool) {
	m, q, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(m, 10, 64)
	seq, err2 := strconv.ParseUint(q, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}
