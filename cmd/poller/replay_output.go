package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers a republished copy carries besides the original's: where it came from.
const (
	HeaderReplayStream   = "Callbus-Replay-Stream"
	HeaderReplaySequence = "Callbus-Replay-Sequence"
)

// replayOutput writes each replayed event that passes the type filter: as one
// line of JSON (NDJSON), as a readable feed line, and/or republished.
type replayOutput struct {
	w      *bufio.Writer
	stderr io.Writer
	types  map[events.Type]bool // none: every type
	feed   *feed                // --pretty
	pub    *republisher         // --to
	entity string               // --entity: only its history
	gaps   gaps                 // between the entity's events
}

func (o *replayOutput) write(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata) error {
	body := msg.Data()
	var head struct {
		Type    events.Type `json:"type"`
		Subject string      `json:"subject"`
		Time    string      `json:"time"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		fmt.Fprintf(o.stderr, "replay: %s sequence %d (%s): not a JSON event, skipped: %v\n", md.Stream, md.Sequence.Stream, msg.Subject(), err)
		return nil
	}
	if len(o.types) > 0 && !o.types[head.Type] || o.entity != "" && !inEntity(head.Subject, o.entity) {
		return nil
	}
	gap := ""
	if o.entity != "" {
		at, _ := time.Parse(time.RFC3339Nano, head.Time) // a bad time counts as none
		gap = o.gaps.next(at)
	}
	if o.pub != nil {
		if err := o.pub.publish(ctx, msg, md); err != nil {
			return err
		}
	}
	switch {
	case o.feed != nil:
		o.feed.printGap(body, gap)
	case o.pub == nil:
		var line bytes.Buffer
		_ = json.Compact(&line, body) // valid: it unmarshalled
		line.WriteByte('\n')
		if _, err := o.w.Write(line.Bytes()); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// flush confirms the republished messages and shows the lines written so far.
func (o *replayOutput) flush(ctx context.Context) error {
	if o.pub != nil {
		if err := o.pub.wait(ctx); err != nil {
			return err
		}
	}
	return o.w.Flush()
}

// finish confirms what was republished and flushes the output. It runs after an
// interrupted --follow too, so it does not depend on ctx, only on a time limit.
func (o *replayOutput) finish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return o.flush(ctx)
}

// republisher publishes replayed events under another first subject token, e.g.
// callcenter.acme.call.created as callcenter-replay.acme.call.created, with the
// original headers and body. Two headers change: Nats-Msg-Id gets a suffix unique
// to this replay (with the original id, the target stream's duplicate window would
// drop an event it stored before, and a second replay would drop the first's), and
// Nats-Expected-* are dropped (they name the original stream). The event id in the
// body is unchanged, so consumers that dedupe by event id still see one event.
type republisher struct {
	js      jetstream.JetStream
	prefix  string
	suffix  string
	pending []jetstream.PubAckFuture
	n       int
}

const republishWindow = 256 // unconfirmed publishes at most

func (r *republisher) publish(ctx context.Context, msg jetstream.Msg, md *jetstream.MsgMetadata) error {
	_, rest, _ := strings.Cut(msg.Subject(), ".")
	m := &nats.Msg{Subject: r.prefix + "." + rest, Data: msg.Data(), Header: nats.Header{}}
	for k, v := range msg.Headers() {
		if lk := strings.ToLower(k); lk != "nats-msg-id" && !strings.HasPrefix(lk, "nats-expected-") {
			m.Header[k] = v
		}
	}
	id := msg.Headers().Get(jetstream.MsgIDHeader)
	if id == "" {
		id = md.Stream + "-" + strconv.FormatUint(md.Sequence.Stream, 10)
	}
	m.Header.Set(jetstream.MsgIDHeader, id+r.suffix)
	m.Header.Set(HeaderReplayStream, md.Stream)
	m.Header.Set(HeaderReplaySequence, strconv.FormatUint(md.Sequence.Stream, 10))
	f, err := r.js.PublishMsgAsync(m)
	if err != nil {
		return fmt.Errorf("republish to %s: %w", m.Subject, err)
	}
	r.pending = append(r.pending, f)
	if len(r.pending) >= republishWindow {
		return r.wait(ctx)
	}
	return nil
}

// wait waits for the stored acknowledgement of every pending publish.
func (r *republisher) wait(ctx context.Context) error {
	for _, f := range r.pending {
		select {
		case <-f.Ok():
			r.n++
		case err := <-f.Err():
			return fmt.Errorf("republish to %s: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.pending = r.pending[:0]
	return nil
}
