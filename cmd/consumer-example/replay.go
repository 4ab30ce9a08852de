package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// runReplay is the replay-dead-letters command: once the cause of the dead letters
// is fixed, it sends each dead letter of one consumer back to its original
// subject, where the consumer (and, as a duplicate they ignore, the other
// consumers of the stream) receives it again, then deletes it from the
// dead-letter stream. With --dry-run it only lists them.
//
// A replayed event keeps its id, so its Nats-Msg-Id is the original's: one
// dead-lettered within the stream's duplicate window of its first publication is
// refused by the stream as a duplicate; it is then kept, and reported, for a later
// run. A crash between the send and the delete sends it twice; the consumer's done
// marks absorb the second.
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var natsURL, durable, prefix string
	var dryRun bool
	fs := flag.NewFlagSet("consumer-example replay-dead-letters", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&natsURL, "nats-url", "nats://127.0.0.1:4222", "NATS server URL(s)")
	fs.StringVar(&durable, "durable", "consumer-example", "the consumer whose dead letters to replay")
	fs.StringVar(&prefix, "dead-letter", "callcenter-dlq", "subject prefix of the dead letters")
	fs.BoolVar(&dryRun, "dry-run", false, "list the dead letters without replaying them")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if err := applyEnv(fs, getenv); err != nil {
		return usageError{err}
	}
	nc, err := nats.Connect(natsURL, nats.Name("callbus-consumer-replay-"+durable))
	if err != nil {
		return fmt.Errorf("connect nats: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	r := replayer{js: js, durable: durable, dryRun: dryRun, out: stdout}
	return r.run(ctx, prefix)
}

type replayer struct {
	js      jetstream.JetStream
	durable string
	dryRun  bool
	out     io.Writer
}

// run replays every dead letter of r.durable under prefix, in their order.
func (r replayer) run(ctx context.Context, prefix string) error {
	name, err := r.js.StreamNameBySubject(ctx, prefix+".>")
	if err != nil {
		return fmt.Errorf("find the dead-letter stream of %s.>: %w", prefix, err)
	}
	s, err := r.js.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("dead-letter stream %s: %w", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("dead-letter stream %s: %w", name, err)
	}
	var replayed, kept int
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // deleted: replayed before
		}
		if err != nil {
			return fmt.Errorf("dead letter %d: %w", seq, err)
		}
		if m.Header.Get(HeaderDLQConsumer) != r.durable || !strings.HasPrefix(m.Subject, prefix+".") {
			continue
		}
		ok, err := r.replay(ctx, s, m)
		if err != nil {
			return err
		}
		if ok {
			replayed++
		} else {
			kept++
		}
	}
	_, _ = fmt.Fprintf(r.out, "%d replayed, %d kept\n", replayed, kept)
	return nil
}

// replay sends one dead letter back; false when it is kept.
func (r replayer) replay(ctx context.Context, s jetstream.Stream, m *jetstream.RawStreamMsg) (bool, error) {
	subject := m.Header.Get(HeaderDLQSubject)
	line := fmt.Sprintf("dead letter %d → %s (%s)", m.Sequence, subject, m.Header.Get(HeaderDLQReason))
	if r.dryRun || subject == "" {
		_, _ = fmt.Fprintln(r.out, "would replay", line)
		return false, nil
	}
	h := nats.Header{}
	for k, v := range m.Header {
		if !strings.HasPrefix(k, "Callbus-Dlq-") && !strings.HasPrefix(strings.ToLower(k), "nats-") {
			h[k] = v
		}
	}
	h.Set(HeaderReplayedSequence, m.Header.Get(HeaderDLQSequence))
	var head struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(m.Data, &head) == nil && head.ID != "" {
		h.Set(jetstream.MsgIDHeader, head.ID) // the contract: Nats-Msg-Id is the event id
	}
	ack, err := r.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: h, Data: m.Data})
	if err != nil {
		return false, fmt.Errorf("replay %s: %w", line, err)
	}
	if ack.Duplicate {
		_, _ = fmt.Fprintln(r.out, "kept (inside the stream's duplicate window; run again later):", line)
		return false, nil
	}
	if err := s.DeleteMsg(ctx, m.Sequence); err != nil {
		return false, fmt.Errorf("delete replayed dead letter %d: %w", m.Sequence, err)
	}
	_, _ = fmt.Fprintln(r.out, "replayed", line)
	return true, nil
}
