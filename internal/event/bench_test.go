package event

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// Micro-benchmarks of envelope encoding, the poller's per-event JSON work after
// the diff: New marshals the data, Message marshals the envelope around it. Run
// with `make bench-micro BENCH=Envelope PKGS=./internal/event/`.

// benchEvents are two example events of the catalog (schemas/examples): the data
// decoded into the types the differ passes to New, and the envelope New makes.
func benchEvents(b *testing.B) map[string]struct {
	env  Envelope
	data any
} {
	b.Helper()
	out := map[string]struct {
		env  Envelope
		data any
	}{}
	for name, data := range map[string]any{"call.created": &CallData{}, "participant.status_changed": &ParticipantStatusData{}} {
		raw, err := os.ReadFile("../../schemas/examples/" + name + ".json")
		if err != nil {
			b.Fatal(err)
		}
		var e Envelope
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
			env  Envelope
			data any
		}{e, data}
	}
	return out
}

// BenchmarkEnvelope: New (data marshalled) then Message (the envelope marshalled,
// which validates and compacts the data's JSON once more), as the poller does for
// each event.
func BenchmarkEnvelope(b *testing.B) {
	for name, ev := range benchEvents(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e, err := New("acme", ev.env.Type, ev.env.Subject, "k", ev.env.Time, ev.data)
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

// BenchmarkEnvelopeMessage is Message alone: the envelope around data already
// marshalled. BenchmarkEnvelopeSpliced is the same body built by marshalling the
// attributes alone and appending the data as it is, a candidate for Message (the
// data comes from json.Marshal in New, so it is already compact and escaped); the
// test checks that both give the same bytes.
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

func BenchmarkEnvelopeSpliced(b *testing.B) {
	for name, ev := range benchEvents(b) {
		want, err := Encode(ev.env, "callcenter", "acme")
		if err != nil {
			b.Fatal(err)
		}
		if got := splicedBody(b, ev.env); !bytes.Equal(got, want.Data) {
			b.Fatalf("%s: spliced body differs:\n%s\n%s", name, got, want.Data)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				splicedBody(b, ev.env)
			}
		})
	}
}

// splicedBody marshals e's attributes, then appends ,"data":<e.Data>} in place of
// the closing brace.
func splicedBody(b *testing.B, e Envelope) []byte {
	head, err := json.Marshal(struct {
		SpecVersion     string    `json:"specversion"`
		ID              string    `json:"id"`
		Source          string    `json:"source"`
		Type            Type      `json:"type"`
		Subject         string    `json:"subject"`
		Time            time.Time `json:"time"`
		DataContentType string    `json:"datacontenttype"`
	}{e.SpecVersion, e.ID, e.Source, e.Type, e.Subject, e.Time, e.DataContentType})
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 0, len(head)+len(`,"data":`)+len(e.Data))
	body = append(body, head[:len(head)-1]...)
	body = append(body, `,"data":`...)
	body = append(body, e.Data...)
	return append(body, '}')
}
