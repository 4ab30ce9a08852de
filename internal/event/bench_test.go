package event

import (
	"encoding/json"
	"github.com/callbus/callbus/events"
	"os"
	"testing"
)

// Micro-benchmarks of envelope encoding, the poller's per-event JSON work after
// the diff: New marshals the data, Message marshals the envelope around it. Run
// with `make bench-micro BENCH=Envelope PKGS=./internal/event/`.

// benchEvents are two example events of the catalog (schemas/examples): the data
// decoded into the types the differ passes to New, and the envelope New makes.
func benchEvents(b *testing.B) map[string]struct {
	env  events.Envelope
	data any
} {
	b.Helper()
	out := map[string]struct {
		env  events.Envelope
		data any
	}{}
	for name, data := range map[string]any{"call.created": &events.CallData{}, "participant.status_changed": &events.ParticipantStatusData{}} {
		raw, err := os.ReadFile("../../schemas/examples/" + name + ".json")
		if err != nil {
			b.Fatal(err)
		}
		var e events.Envelope
		if err := json.Unmarshal(raw, &e); err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(e.Data, data); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		if e, err = New("acme", e.Type, e.Subject, "k", e.Time, data); err != nil { // compact data, as the differ's
			b.Fatal(err)
		}
		out[name] = struct {
			env  events.Envelope
			data any
		}{e, data}
	}
	return out
}

// BenchmarkEnvelope: the data marshalled (as the diff does), New, then Encode (the
// envelope written around the data), as the poller does for each event.
func BenchmarkEnvelope(b *testing.B) {
	for name, ev := range benchEvents(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				data, err := json.Marshal(ev.data)
				if err != nil {
					b.Fatal(err)
				}
				e, err := New("acme", ev.env.Type, ev.env.Subject, "k", ev.env.Time, json.RawMessage(data))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Encode(e, "callcenter", "acme"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnvelopeMessage is Encode alone: the envelope around data already
// marshalled.
func BenchmarkEnvelopeMessage(b *testing.B) {
	for name, ev := range benchEvents(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(ev.env, "callcenter", "acme"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkID: the id of one event, derived once per event by the diff.
func BenchmarkID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if len(ID("acme", events.ParticipantStatusChanged, "calls/812/participants/4431", "3f9a0c21d7e4/5/9c1e07a2b4d3")) != 32 {
			b.Fatal("id length")
		}
	}
}
