package publish

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// parseAck reads what the server answers a publish as the jetstream library
// does: the usual PubAck in place, anything else through encoding/json.
func TestParseAck(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		status     string
		want       jetstream.PubAck
		err        error
	}{
		{name: "stored", data: `{"stream":"CALLCENTER","seq":42}`, want: jetstream.PubAck{Stream: "CALLCENTER", Sequence: 42}},
		{name: "another stream", data: `{"stream":"OTHER","seq":5}`, want: jetstream.PubAck{Stream: "OTHER", Sequence: 5}},
		{name: "duplicate", data: `{"stream":"CALLCENTER","seq":7,"duplicate":true}`, want: jetstream.PubAck{Stream: "CALLCENTER", Sequence: 7, Duplicate: true}},
		{name: "domain", data: `{"stream":"S","seq":9,"domain":"hub"}`, want: jetstream.PubAck{Stream: "S", Sequence: 9, Domain: "hub"}},
		{name: "other order", data: `{"seq":3,"stream":"S"}`, want: jetstream.PubAck{Stream: "S", Sequence: 3}},
		{name: "no stream", data: `{"seq":3}`, err: jetstream.ErrInvalidJSAck},
		{name: "not JSON", data: `nope`, err: jetstream.ErrInvalidJSAck},
		{name: "no responders", status: "503", err: jetstream.ErrNoStreamResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &nats.Msg{Data: []byte(tc.data), Header: nats.Header{}}
			if tc.status != "" {
				m.Header.Set("Status", tc.status)
			}
			got, err := parseAck(m, "CALLCENTER")
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("parseAck(%s) = %+v, %v; want %+v, %v", tc.data, got, err, tc.want, tc.err)
			}
		})
	}
	m := &nats.Msg{Data: []byte(`{"error":{"code":400,"err_code":10060,"description":"expected stream does not match"}}`)}
	_, err := parseAck(m, "CALLCENTER")
	var api *jetstream.APIError
	if !errors.As(err, &api) || api.ErrorCode != 10060 {
		t.Errorf("an API error reads as %v, want the APIError 10060", err)
	}
}

// Replies are taken oldest first; a reply to a message the window forgot
// (reset after a failure) is dropped, never taken for a later message's.
func TestAckWindowOrderAndReset(t *testing.T) {
	w := &ackWindow{got: make(chan struct{}, 1), slots: make([]ackSlot, 3)}
	w.put(1, jetstream.PubAck{Sequence: 11}, nil)
	if _, _, ok := w.take(0); ok {
		t.Fatal("message 0 taken before its reply came")
	}
	w.put(0, jetstream.PubAck{Sequence: 10}, nil)
	for seq, want := range []uint64{10, 11} {
		if ack, err, ok := w.take(uint64(seq)); !ok || err != nil || ack.Sequence != want {
			t.Fatalf("take(%d) = %+v, %v, %v; want sequence %d", seq, ack, err, ok, want)
		}
	}
	w.reset()                            // message 2 abandoned
	w.slots = append(w.slots, ackSlot{}) // message 3 sent
	w.put(2, jetstream.PubAck{Sequence: 12}, nil)
	if _, _, ok := w.take(3); ok {
		t.Fatal("the late reply to message 2 was taken for message 3's")
	}
	w.failPending(nats.ErrDisconnected)
	if _, err, ok := w.take(3); !ok || !errors.Is(err, nats.ErrDisconnected) {
		t.Errorf("after a disconnection take(3) = %v, %v; want ErrDisconnected", err, ok)
	}
}

// A window slides over many more messages than it holds at once, replies
// coming out of order: each is taken for its own message, and the array is
// reused rather than grown (push compacts it when full).
func TestAckWindowSlides(t *testing.T) {
	w := &ackWindow{got: make(chan struct{}, 1)}
	const inFlight, total = 40, 1000
	next, taken := uint64(0), uint64(0)
	for taken < total {
		for next < total && next-taken < inFlight {
			w.mu.Lock()
			if seq := w.push(); seq != next {
				t.Fatalf("push gave sequence %d, want %d", seq, next)
			}
			w.mu.Unlock()
			next++
		}
		for seq := next - 1; seq+1 > taken; seq-- { // newest first
			w.put(seq, jetstream.PubAck{Sequence: seq + 100}, nil)
		}
		for i := 0; i < 7 && taken < next; i++ {
			ack, err, ok := w.take(taken)
			if !ok || err != nil || ack.Sequence != taken+100 {
				t.Fatalf("take(%d) = %+v, %v, %v", taken, ack, err, ok)
			}
			taken++
		}
		if c := cap(w.slots); c > 2*inFlight {
			t.Fatalf("the window's array grew to %d slots for %d in flight", c, inFlight)
		}
	}
	if w.shed(); w.pending() != 0 || cap(w.slots) > idleCap {
		t.Errorf("drained window, shed: %d pending, array of %d kept", w.pending(), cap(w.slots))
	}
}
