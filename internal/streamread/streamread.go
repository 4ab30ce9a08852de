// Package streamread reads a JetStream stream up to where it ended when the read
// began: the bounded read shared by the relay's resume, the audit and the replay
// command.
package streamread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stop, returned by a Read callback, ends the read early; Read then returns nil.
var Stop = errors.New("streamread: stop")

// idle is how long Read waits for a message before asking the server whether any
// is left: the last one may have expired from the stream, or the filter may match
// none of the messages up to the end.
var idle = 2 * time.Second // a variable for tests

// readInactive is how long the server keeps a Read's consumer once nothing pulls
// from it, when cfg sets no InactiveThreshold (nats.go's default for an ordered
// consumer is 5 minutes). A fleet replica reads the stream for every account it
// starts and stops (the relay's reconcile, the announced history), and
// nats-server allows 1,000 consumers per stream by default (2.15): with the
// consumers of 5 minutes of reads alive, a replica starting 2,000 accounts ran
// out of them and its relays failed until old ones expired. While Read pulls,
// the consumer is active; should the server drop it during a slow callback, the
// ordered consumer makes a new one from where it was.
const readInactive = 10 * time.Second

// Read calls fn, in stream order, for each message of s that cfg selects, up to
// the stream's last message as of the call: messages stored later are not waited
// for. It reads through an ordered consumer (no state stays on the server; the
// client resumes it after a reconnect; the server forgets it readInactive after
// the read).
//
// It returns nil once fn has seen the last selected message or none is left; nil
// when fn returns Stop; fn's other errors as they are; ctx's error when ctx ends;
// and otherwise an error naming the failed step.
func Read(ctx context.Context, s jetstream.Stream, cfg jetstream.OrderedConsumerConfig, fn func(jetstream.Msg, *jetstream.MsgMetadata) error) error {
	name := ""
	if ci := s.CachedInfo(); ci != nil {
		name = ci.Config.Name
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("stream %s info: %w", name, err)
	}
	end := info.State.LastSeq
	if info.State.Msgs == 0 || (cfg.DeliverPolicy == jetstream.DeliverByStartSequencePolicy && cfg.OptStartSeq > end) {
		return nil
	}
	if cfg.InactiveThreshold == 0 {
		cfg.InactiveThreshold = readInactive
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("ordered consumer on %s: %w", name, err)
	}
	if ci := cons.CachedInfo(); ci != nil && ci.NumPending == 0 {
		return nil // nothing in range
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer it.Stop()
	idleRounds := 0
	for {
		msg, err := next(ctx, it)
		switch {
		case err == nil:
			idleRounds = 0
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded): // idle: is anything left?
			ci, ierr := cons.Info(ctx)
			if ierr == nil && ci.NumPending == 0 {
				return nil
			}
			// An ordered consumer can stay stuck with messages pending (seen after
			// the loss of a clustered stream's node): give up after a few idle
			// rounds, so the caller reads again on a new consumer, rather than
			// wait forever.
			if idleRounds++; idleRounds >= maxIdleRounds {
				return fmt.Errorf("read %s: %w", name, ErrStalled)
			}
			continue
		default:
			return fmt.Errorf("read %s: %w", name, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("read %s: metadata: %w", name, err)
		}
		if md.Sequence.Stream > end {
			return nil
		}
		if err := fn(msg, md); err != nil {
			if errors.Is(err, Stop) {
				return nil
			}
			return err
		}
		if md.Sequence.Stream >= end || md.NumPending == 0 {
			return nil
		}
	}
}

// maxIdleRounds is how many idle waits in a row, with messages still pending, a
// read takes before it reports ErrStalled.
const maxIdleRounds = 5

// ErrStalled: the read's consumer delivered nothing for maxIdleRounds idle waits
// while the server still counted messages pending for it; reading again (a new
// consumer) is the remedy.
var ErrStalled = errors.New("ordered consumer stalled with messages pending")

// next waits at most idle for the next message.
func next(ctx context.Context, it jetstream.MessagesContext) (jetstream.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, idle)
	defer cancel()
	return it.Next(jetstream.NextContext(ctx))
}
