package publish

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/streamread"
	"github.com/nats-io/nats.go/jetstream"
)

// reconcileMargin is how far before the oldest outbox entry reconcile reads the
// stream: Redis and NATS clocks may differ.
const reconcileMargin = 10 * time.Minute

// stored is an outbox entry found in the stream.
type stored struct {
	event string // its event id (Nats-Msg-Id)
	seq   uint64 // its stream sequence
}

// reconcile makes the outbox agree with the stream before the relay publishes
// again; Run calls it at start and after any failure, so the relay never relies
// on JetStream's duplicate window alone (an entry older than the window would be
// stored twice). It reads this account's messages stored since shortly before the
// oldest outbox entry was committed (Callbus-Outbox-Id header), then:
//
//   - trims the longest prefix of the outbox whose entries are all in the stream;
//   - withdraws (deletes from the stream) every later entry stored ahead of the
//     first missing one (a publish failed while later ones in flight did not),
//     so that the stream keeps outbox order: the relay publishes them again
//     after the missing one, once the duplicate window lets it (errWithdrawn).
//
// An id the stream holds for another event (Redis lost data and reused ids) is
// neither trimmed nor withdrawn. It also refreshes the stream's limits.
func (r *Relay) reconcile(ctx context.Context) error {
	s, err := r.streams.Stream(ctx, r.cfg.Stream)
	if err != nil {
		return fmt.Errorf("reconcile: stream %s: %w", r.cfg.Stream, err)
	}
	r.stream, r.maxMsg = s, int64(s.CachedInfo().Config.MaxMsgSize)
	if r.cfg.Filter == "" {
		return nil
	}
	head, err := r.outbox.ReadOutbox(ctx, "", 1)
	if err != nil {
		return fmt.Errorf("reconcile: read outbox: %w", err)
	}
	if len(head) == 0 {
		return nil
	}
	published, lastID, err := r.publishedSince(ctx, s, head[0].CommittedAt.Add(-reconcileMargin), head[0].StreamID)
	if err != nil {
		return err
	}
	n, upTo, ahead, err := r.compare(ctx, published, lastID)
	if err != nil {
		return err
	}
	if n > 0 {
		if err := r.outbox.TrimOutbox(ctx, upTo); err != nil {
			return fmt.Errorf("reconcile: trim outbox to %s: %w", upTo, err)
		}
		r.Stats.Skipped.Add(int64(n))
		r.log.Info().Int("entries", n).Str("outbox_id", upTo).Msg("relay: skipped outbox entries already in the stream")
	}
	for _, seq := range ahead {
		if err := s.DeleteMsg(ctx, seq); err != nil {
			return fmt.Errorf("reconcile: withdraw stream sequence %d: %w", seq, err)
		}
		r.Stats.Withdrawn.Add(1)
	}
	if len(ahead) > 0 {
		r.log.Warn().Int("messages", len(ahead)).Msg("relay: withdrew events stored ahead of a missing one; they are published again after it")
	}
	return nil
}

// compare walks the outbox against published: it returns the length of the prefix
// found in the stream and its last outbox id, and the stream sequences of entries
// stored after the first missing one. The walk ends at lastID, the newest entry
// the stream holds: nothing after it can be ahead.
func (r *Relay) compare(ctx context.Context, published map[string]stored, lastID string) (int, string, []uint64, error) {
	n, upTo, after := 0, "", ""
	var ahead []uint64
	gap := false
	for {
		recs, err := r.outbox.ReadOutbox(ctx, after, r.cfg.Batch)
		if err != nil {
			return 0, "", nil, fmt.Errorf("reconcile: read outbox: %w", err)
		}
		for _, rec := range recs {
			p, ok := published[rec.StreamID]
			in := ok && p.event == rec.ID
			switch {
			case in && !gap:
				n, upTo = n+1, rec.StreamID
			case in:
				ahead = append(ahead, p.seq)
				r.withdrawn[rec.ID] = struct{}{}
			default:
				gap = true
			}
			if rec.StreamID == lastID || (gap && lastID == "") {
				return n, upTo, ahead, nil
			}
		}
		if len(recs) < r.cfg.Batch {
			return n, upTo, ahead, nil
		}
		after = recs[len(recs)-1].StreamID
	}
}

// publishedSince maps the outbox id of each message of this account stored in s
// since the given time (up to the stream's end) to its event id and sequence, and
// returns the outbox id of the last one ("" when none). Messages of entries
// before head, the outbox's oldest entry, are left out: they were trimmed, and
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
			out[id] = stored{event: m.Headers().Get(event.HeaderID), seq: md.Sequence.Stream}
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
