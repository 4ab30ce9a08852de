package publish

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Outbox is what the relay needs of the store: entries in commit order,
// trimming of the ones it has published, the published ones kept for a while
// after (to heal a stream that lost them), and a count of its withdrawals that
// outlives its process. *cursor.Store is one as it is: the entries are
// event.Committed, which both packages name without importing each other.
type Outbox interface {
	// ReadOutbox returns up to count entries after the entry with id after ("" for
	// the beginning), oldest first, each with the time it was committed; none
	// only when no more follow (fewer than count may be what is at hand).
	ReadOutbox(ctx context.Context, after string, count int) ([]event.Committed, error)
	// TrimOutbox removes every entry up to and including upTo, and no newer one,
	// from what ReadOutbox returns; it keeps them for a retention (ReadAcked) and
	// forgets their withdrawals.
	TrimOutbox(ctx context.Context, upTo string) error
	// ReadAcked is ReadOutbox of the trimmed entries still kept, all older than
	// the outbox's.
	ReadAcked(ctx context.Context, after string, count int) ([]event.Committed, error)
	// WithdrawOutbox counts one more withdrawal of each entry (by outbox id) and
	// returns each one's count; OutboxWithdrawals returns the counts of the
	// entries not trimmed yet.
	WithdrawOutbox(ctx context.Context, ids []string) (map[string]int, error)
	OutboxWithdrawals(ctx context.Context) (map[string]int, error)
}

// DefaultInFlight is the relay's default limit on publishes awaiting their
// acknowledgement (its ackWindow holds them).
const DefaultInFlight = 512

// RelayConfig tunes the relay; zero values take the defaults in brackets.
type RelayConfig struct {
	Stream   string        // stream name, required: Nats-Expected-Stream
	Filter   string        // subjects of this account, for resuming: <prefix>.<account>.>
	Batch    int           // outbox entries read (and the lease confirmed) at a time [512]
	InFlight int           // publishes awaiting acknowledgement at most [DefaultInFlight]
	AckWait  time.Duration // how long to wait for one acknowledgement [10s]
	Idle     time.Duration // how often to look at an empty outbox without a Wake [250ms]
}

// Stats are the relay's counters, safe to read while it runs.
type Stats struct {
	Published  atomic.Int64 // messages acknowledged as new
	Duplicates atomic.Int64 // acknowledged as duplicates (already in the stream)
	Errors     atomic.Int64 // failed publishes (retried)
	Skipped    atomic.Int64 // outbox entries found already in the stream when reconciling
	Truncated  atomic.Int64 // events published in reduced form (see fit)
	Withdrawn  atomic.Int64 // stream messages deleted because they got ahead of a missing one
	Healed     atomic.Int64 // acknowledged events the stream lost, published again from the retention
}

// Relay moves outbox entries to JetStream. Run (or Start) it once at a time;
// Wake may be called from any goroutine. Optional collaborators come as RelayOptions.
type Relay struct {
	replies *ackWindow              // the acknowledgements of what it publishes
	out     outMsg                  // the message being sent (sendOne; one at a time)
	streams jetstream.StreamManager // to read the stream back when reconciling
	outbox  Outbox
	cfg     RelayConfig
	log     zerolog.Logger
	// parking is a run's wait between its turns (park.go): mu guards waiting,
	// the run waiting on its timer with no goroutine, and woken, a Wake that
	// came while none was waiting.
	mu      sync.Mutex
	waiting *relayRun
	woken   bool
	stream  jetstream.Stream // as of the last reconcile: duplicate checks, withdrawals
	maxMsg  int64            // the stream's max_msg_size as of the last reconcile (<= 0: none)
	// withdrawn counts, by outbox id, how often each entry was withdrawn from
	// the stream (Outbox.OutboxWithdrawals as of the last reconcile, and since): an
	// entry withdrawn n times is published under event.MsgID(id, n), which the
	// stream's duplicate window has not seen.
	withdrawn map[string]int
	start     flight  // where the last reconcile found publishing must resume
	resume    *flight // where the last Run stopped, when it could vouch for it (see resumed)
	// reconnects counts the NATS connection's reconnections (nil: not known);
	// seen is its value at the last reconcile.
	reconnects  func() uint64
	seen        uint64
	onPublished func([]Published)
	published   []Published // acknowledged since onPublished was last called
	onTruncated func(r event.Committed, originalSize int)
	maxPayload  func() int64
	fence       func(ctx context.Context) (time.Duration, error)
	tracer      trace.Tracer
	untraced    bool // tracer is the default, which records nothing
	Stats       Stats
}

// fenceShare is the part of the lease's remaining time the relay publishes in
// after confirming it: the rest is margin for the clocks of Redis and this host
// and for messages on their way to the server.
const fenceShare = 0.8

// NewRelay returns a relay from outbox to the stream cfg.Stream: it publishes
// on nc (see ackHub) and, to reconcile, reads the stream it finds through
// streams.
func NewRelay(nc *nats.Conn, streams jetstream.StreamManager, outbox Outbox, cfg RelayConfig, log zerolog.Logger, opts ...RelayOption) *Relay {
	if cfg.Batch <= 0 {
		cfg.Batch = 512
	}
	if cfg.InFlight <= 0 {
		cfg.InFlight = DefaultInFlight
	}
	cfg.Batch = min(cfg.Batch, cfg.InFlight)
	if cfg.AckWait <= 0 {
		cfg.AckWait = 10 * time.Second
	}
	if cfg.Idle <= 0 {
		cfg.Idle = 250 * time.Millisecond
	}
	r := &Relay{replies: hubOf(nc).open(cfg.Stream), streams: streams, outbox: outbox, cfg: cfg, log: log, withdrawn: map[string]int{}, tracer: noop.NewTracerProvider().Tracer("")}
	for _, o := range opts {
		o(r)
	}
	_, r.untraced = r.tracer.(noop.Tracer)
	return r
}

// Run relays until ctx ends, retrying failures with backoff forever (a NATS outage
// must not lose events: they wait in the outbox). It returns ctx's error.
//
// Order: entries are published asynchronously, up to InFlight awaiting their
// acknowledgement, and acknowledged in outbox order; the next batch is read and
// sent while earlier ones wait for theirs (see step). Whenever the relay cannot
// vouch for what the stream holds (at start, and after any failure), it
// reconciles with the stream before publishing again (see reconcile): entries
// already stored are trimmed, entries stored ahead of a missing one are
// withdrawn, and publishing resumes in order from the first missing entry,
// acknowledged ones the stream lost included. It also reconciles whenever the
// NATS connection came back (WithReconnects): the server may have restarted
// without what it had acknowledged.
func (r *Relay) Run(ctx context.Context) error {
	done := make(chan struct{})
	r.Start(ctx, func() { close(done) })
	<-done
	return ctx.Err()
}

// Drain relays until the outbox is empty or ctx ends: the last step of an orderly
// shutdown, after the poller has stopped committing. It returns the first error.
// It goes on from where Run stopped when it can vouch for the stream from there
// (resumed); otherwise it reconciles first.
func (r *Relay) Drain(ctx context.Context) error {
	fl := r.resumed(ctx)
	if fl == nil {
		if err := r.reconcile(ctx); err != nil {
			return err
		}
		fl = &flight{}
		*fl = r.start
	}
	defer r.abandon(fl)
	for {
		n, err := r.step(ctx, fl)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// resumed returns the flight the last Run left (nil: none), once what it had in
// flight is acknowledged and trimmed, when nothing since calls for a reconcile:
// no reconnection, no failed or missing acknowledgement. A reconcile reads back
// every message of the account stored since some minutes before the outbox's
// oldest entry: after a backlog, hundreds of thousands, at every shutdown.
func (r *Relay) resumed(ctx context.Context) *flight {
	fl := r.resume
	r.resume = nil
	if fl == nil {
		return nil
	}
	if r.reconnected() {
		r.abandon(fl)
		return nil
	}
	_, err := r.acks(ctx, fl, 0)
	if err == nil {
		err = r.trim(ctx, fl, true)
	}
	if err != nil {
		r.log.Info().Err(err).Msg("relay: drain reconciles first")
		r.restart(ctx, fl)
		return nil
	}
	return fl
}

// reconnected reports whether the NATS connection reconnected since the last
// reconcile.
func (r *Relay) reconnected() bool {
	return r.reconnects != nil && r.reconnects() != r.seen
}
