package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The relay publishes with core NATS and takes JetStream's acknowledgements on a
// reply subject of its own, rather than through jetstream.PublishMsgAsync, which
// made for every message a future with two channels, a map entry, a timer and an
// encoding/json decode of the acknowledgement (about a fifth of the relay's CPU
// and garbage in a backlog). The protocol is the same: a message with a reply
// subject, answered by the stream with a PubAck or an API error.
//
// An ackHub is one wildcard subscription per NATS connection, shared by every
// relay of the process (a replica of thousands of accounts keeps one); each relay
// run has an ackWindow in it: the replies to its messages in the order it sent
// them, numbered by a sequence of its own that never goes back, so a late reply to
// a message the relay gave up on cannot be taken for another's. The hub holds its
// windows weakly: a relay dropped (an account whose leadership moved) takes its
// window with it, without a close to forget.

// ackHub receives the acknowledgements of one connection.
type ackHub struct {
	nc     *nats.Conn
	prefix string // reply subjects: <prefix><window>.<n>
	once   sync.Once
	err    error // subscribing failed (returned by every publish)

	mu      sync.Mutex
	windows map[uint64]weak.Pointer[ackWindow]
	next    uint64
}

var hubs sync.Map // *nats.Conn → *ackHub

// hubOf returns the connection's hub, subscribing on first use.
func hubOf(nc *nats.Conn) *ackHub {
	if h, ok := hubs.Load(nc); ok {
		return h.(*ackHub)
	}
	h, _ := hubs.LoadOrStore(nc, &ackHub{nc: nc, prefix: nc.NewRespInbox() + ".", windows: map[uint64]weak.Pointer[ackWindow]{}})
	return h.(*ackHub)
}

// start subscribes once, and fails every window's pending replies when the
// connection drops: the server's answers to them are lost (as the jetstream
// library does), and the relay need not wait AckWait to learn it.
func (h *ackHub) start() error {
	h.once.Do(func() {
		if _, err := h.nc.Subscribe(h.prefix+"*.*", h.deliver); err != nil {
			h.err = fmt.Errorf("subscribe to acknowledgements: %w", err)
			return
		}
		status := h.nc.StatusChanged(nats.RECONNECTING, nats.CLOSED)
		go func() {
			for s := range status {
				h.mu.Lock()
				for _, wp := range h.windows {
					if w := wp.Value(); w != nil {
						w.failPending(nats.ErrDisconnected)
					}
				}
				h.mu.Unlock()
				if s == nats.CLOSED {
					hubs.Delete(h.nc) // a new connection gets a hub of its own
					return
				}
			}
		}()
	})
	return h.err
}

// open returns a new window (see ackWindow) for messages to stream, forgotten
// once unreachable.
func (h *ackHub) open(stream string) *ackWindow {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	w := &ackWindow{hub: h, id: h.next, stream: stream, got: make(chan struct{}, 1)}
	w.reply = fmt.Appendf(make([]byte, 0, len(h.prefix)+2*20+1), "%s%d.", h.prefix, w.id) // room for two numbers
	w.prefix = len(w.reply)
	h.windows[w.id] = weak.Make(w)
	runtime.AddCleanup(w, h.forget, w.id)
	return w
}

// forget drops window id's entry.
func (h *ackHub) forget(id uint64) {
	h.mu.Lock()
	delete(h.windows, id)
	h.mu.Unlock()
}

// deliver files a reply with its window (none: the window closed, dropped).
func (h *ackHub) deliver(m *nats.Msg) {
	rest := strings.TrimPrefix(m.Subject, h.prefix)
	id, n, ok := strings.Cut(rest, ".")
	wid, err1 := strconv.ParseUint(id, 10, 64)
	seq, err2 := strconv.ParseUint(n, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return
	}
	h.mu.Lock()
	w := h.windows[wid].Value()
	h.mu.Unlock()
	if w != nil {
		ack, err := parseAck(m, w.stream)
		w.put(seq, ack, err)
	}
}

// ackWindow holds one relay run's replies, oldest first.
type ackWindow struct {
	hub    *ackHub
	id     uint64
	stream string        // the stream its messages expect: the name their PubAcks carry
	got    chan struct{} // signalled when a reply arrives
	// reply is <prefix><id>. (its first prefix bytes) and the sequence of the
	// message being published: the reply subject, written in place (publish).
	reply  []byte
	prefix int

	mu sync.Mutex
	// slots[head:] are the replies to first, first+1, ... as they come: a
	// queue over one array, reused as the window slides (a slice advanced
	// by slots[1:] was reallocated by append every window's length).
	first uint64
	head  int
	slots []ackSlot
}

// pending is how many messages await their reply; mu is held.
func (w *ackWindow) pending() int { return len(w.slots) - w.head }

// push adds a slot for the next message and returns its sequence; mu is held.
func (w *ackWindow) push() uint64 {
	if w.head > 0 && len(w.slots) == cap(w.slots) {
		n := copy(w.slots, w.slots[w.head:])
		clear(w.slots[n:])
		w.slots, w.head = w.slots[:n], 0
	}
	w.slots = append(w.slots, ackSlot{})
	return w.first + uint64(w.pending()) - 1
}

// pop forgets the oldest slot and returns it; mu is held and one is pending.
func (w *ackWindow) pop() ackSlot {
	s := w.slots[w.head]
	w.slots[w.head] = ackSlot{}
	w.head++
	w.first++
	if w.head == len(w.slots) {
		w.slots, w.head = w.slots[:0], 0 // kept for the next burst until the relay idles (shed)
	}
	return s
}

// shed gives up the array a burst left, once drained (see idle.go).
func (w *ackWindow) shed() {
	w.mu.Lock()
	if w.pending() == 0 {
		w.slots, w.head = shedSlice(w.slots[:0]), 0
	}
	w.mu.Unlock()
}

// ackSlot is one message's reply: in once it came.
type ackSlot struct {
	in  bool
	ack jetstream.PubAck
	err error
}

// publish sends msg with a reply subject of the window and returns its sequence.
// One message at a time: it is not safe for concurrent use.
func (w *ackWindow) publish(msg *nats.Msg) (uint64, error) {
	if err := w.hub.start(); err != nil {
		return 0, err
	}
	w.mu.Lock()
	seq := w.push()
	w.mu.Unlock()
	// One allocation for the reply subject (the string), not two (the
	// sequence's digits and the concatenation): the window's prefix is kept in
	// a buffer the digits are written after.
	w.reply = strconv.AppendUint(w.reply[:w.prefix], seq, 10)
	msg.Reply = string(w.reply)
	err := w.hub.nc.PublishMsg(msg)
	if err != nil {
		w.mu.Lock()
		if w.pending() > 0 && w.first+uint64(w.pending()) == seq+1 {
			w.slots = w.slots[:len(w.slots)-1] // not sent: the next takes its number
		}
		w.mu.Unlock()
		return 0, err
	}
	return seq, nil
}

// put files the reply to seq.
func (w *ackWindow) put(seq uint64, ack jetstream.PubAck, err error) {
	w.mu.Lock()
	if seq >= w.first && seq < w.first+uint64(w.pending()) {
		w.slots[w.head+int(seq-w.first)] = ackSlot{in: true, ack: ack, err: err}
	}
	w.mu.Unlock()
	select {
	case w.got <- struct{}{}:
	default:
	}
}

// failPending files err as the reply of every message not answered yet.
func (w *ackWindow) failPending(err error) {
	w.mu.Lock()
	for i := w.head; i < len(w.slots); i++ {
		if !w.slots[i].in {
			w.slots[i] = ackSlot{in: true, err: err}
		}
	}
	w.mu.Unlock()
	select {
	case w.got <- struct{}{}:
	default:
	}
}

// take returns the reply to seq, the oldest message awaited, and forgets it;
// false when it has not come.
func (w *ackWindow) take(seq uint64) (jetstream.PubAck, error, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if seq != w.first || w.pending() == 0 {
		return jetstream.PubAck{}, fmt.Errorf("acknowledgement %d is not the oldest awaited (%d)", seq, w.first), true
	}
	if !w.slots[w.head].in {
		return jetstream.PubAck{}, nil, false
	}
	s := w.pop()
	return s.ack, s.err, true
}

// wait is take that waits for the reply up to timeout or ctx's end.
func (w *ackWindow) wait(ctx context.Context, seq uint64, timeout time.Duration) (jetstream.PubAck, error) {
	var timer *time.Timer
	for {
		if ack, err, ok := w.take(seq); ok {
			if timer != nil {
				timer.Stop()
			}
			return ack, err
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		select {
		case <-w.got:
		case <-timer.C:
			w.drop(seq)
			return jetstream.PubAck{}, fmt.Errorf("no acknowledgement within %s", timeout)
		case <-ctx.Done():
			return jetstream.PubAck{}, ctx.Err()
		}
	}
}

// drop forgets seq, the oldest message awaited, answered or not.
func (w *ackWindow) drop(seq uint64) {
	w.mu.Lock()
	if seq == w.first && w.pending() > 0 {
		w.pop()
	}
	w.mu.Unlock()
}

// reset forgets every message awaited: their replies, when they come, are
// dropped, and the next message gets a sequence none of them had.
func (w *ackWindow) reset() {
	w.mu.Lock()
	w.first += uint64(w.pending())
	w.slots, w.head = nil, 0
	w.mu.Unlock()
}

// parseAck reads a reply: a PubAck, a JetStream API error, or no responders.
// The server writes a PubAck as {"stream":"NAME","seq":N[,"duplicate":true]...}:
// read in place (stream: the name it is expected to carry, see fastAck);
// anything else goes through encoding/json.
func parseAck(m *nats.Msg, stream string) (jetstream.PubAck, error) {
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		return jetstream.PubAck{}, jetstream.ErrNoStreamResponse
	}
	if ack, ok := fastAck(m.Data, stream); ok {
		return ack, nil
	}
	var r struct {
		Error *jetstream.APIError `json:"error,omitempty"`
		jetstream.PubAck
	}
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return jetstream.PubAck{}, jetstream.ErrInvalidJSAck
	}
	if r.Error != nil {
		return jetstream.PubAck{}, r.Error
	}
	if r.Stream == "" {
		return jetstream.PubAck{}, jetstream.ErrInvalidJSAck
	}
	return r.PubAck, nil
}

// fastAck reads the usual PubAck, {"stream":"NAME","seq":N} with at most
// "duplicate" and "domain" after; false for anything else. A PubAck naming stream
// (every one, for messages that expect it) takes stream's string rather than a
// copy of the name.
func fastAck(b []byte, stream string) (jetstream.PubAck, bool) {
	const head = `{"stream":"`
	if !bytes.HasPrefix(b, []byte(head)) || b[len(b)-1] != '}' {
		return jetstream.PubAck{}, false
	}
	b = b[len(head):]
	end := bytes.IndexByte(b, '"')
	if end <= 0 || bytes.IndexByte(b[:end], '\\') >= 0 {
		return jetstream.PubAck{}, false
	}
	ack := jetstream.PubAck{Stream: stream}
	if string(b[:end]) != stream {
		ack.Stream = string(b[:end])
	}
	b = b[end+1:]
	const seq = `,"seq":`
	if !bytes.HasPrefix(b, []byte(seq)) {
		return jetstream.PubAck{}, false
	}
	b = b[len(seq):]
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		ack.Sequence = ack.Sequence*10 + uint64(b[i]-'0')
		i++
	}
	if i == 0 || i > 19 {
		return jetstream.PubAck{}, false
	}
	switch rest := b[i:]; {
	case len(rest) == 1: // }
	case bytes.Equal(rest, []byte(`,"duplicate":true}`)):
		ack.Duplicate = true
	default:
		return jetstream.PubAck{}, false // domain, batch fields...: encoding/json
	}
	return ack, true
}
