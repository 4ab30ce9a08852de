package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/schemas"
)

// v1Digest is the transition digest (digest.go) as encoding/json reads it from the
// data, the reference of TestDataEncodingAsEncodingJSON.
func v1Digest(data []byte) string {
	var tr struct {
		Previous       json.RawMessage `json:"previous,omitempty"`
		Current        json.RawMessage `json:"current,omitempty"`
		Changes        json.RawMessage `json:"changes,omitempty"`
		MembersAdded   json.RawMessage `json:"members_added,omitempty"`
		MembersRemoved json.RawMessage `json:"members_removed,omitempty"`
	}
	if json.Unmarshal(data, &tr) != nil || (tr.Previous == nil && tr.Current == nil && tr.Changes == nil && tr.MembersAdded == nil && tr.MembersRemoved == nil) {
		return ""
	}
	h := sha256.New()
	for _, part := range [][]byte{tr.Previous, tr.Current, tr.Changes, tr.MembersAdded, tr.MembersRemoved} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// exampleData is the data of every published example event.
func exampleData(tb testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for name, body := range schemas.Examples() {
		var e struct{ Data json.RawMessage }
		if err := json.Unmarshal(body, &e); err != nil {
			tb.Fatal(err)
		}
		out[name] = e.Data
	}
	return out
}

// BenchmarkTransitionDigest is the digest of a participant.status_changed event's
// data (the call's participant beside the transition), once per event, from where
// eventData wrote its parts; BenchmarkTransitionDigestEncodingJSON the same read by
// encoding/json (as earlier releases did).
func BenchmarkTransitionDigest(b *testing.B) {
	var d events.ParticipantStatusData
	if err := json.Unmarshal(exampleData(b)["participant.status_changed"], &d); err != nil {
		b.Fatal(err)
	}
	w := jsonWriter{}
	sp, err := w.eventData(&d)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var key [64]byte
	for b.Loop() {
		if len(sp.appendDigest(key[:0], w.b)) == 0 {
			b.Fatal("no digest")
		}
	}
}

func BenchmarkTransitionDigestEncodingJSON(b *testing.B) {
	data := exampleData(b)["participant.status_changed"]
	b.ReportAllocs()
	for b.Loop() {
		if v1Digest(data) == "" {
			b.Fatal("no digest")
		}
	}
}

// reparsed is the transition as reparseDigest reads it.
type reparsed struct {
	Previous       jsontext.Value `json:"previous,omitempty"`
	Current        jsontext.Value `json:"current,omitempty"`
	Changes        jsontext.Value `json:"changes,omitempty"`
	MembersAdded   jsontext.Value `json:"members_added,omitempty"`
	MembersRemoved jsontext.Value `json:"members_removed,omitempty"`
}

var reparseOptions = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), jsonv2.MatchCaseInsensitiveNames(true))

// reparseDigest is the digest as the previous release computed it: the data
// marshalled by encoding/json read again by go-json-experiment/json, with options
// that read it as encoding/json would. The "before" of BenchmarkEventData.
func reparseDigest(data []byte) string {
	var tr reparsed
	if err := jsonv2.Unmarshal(data, &tr, reparseOptions); err != nil {
		return "" // data is an object the diff itself marshalled: cannot happen
	}
	if tr.Previous == nil && tr.Current == nil && tr.Changes == nil && tr.MembersAdded == nil && tr.MembersRemoved == nil {
		return ""
	}
	h := sha256.New()
	for _, part := range [][]byte{tr.Previous, tr.Current, tr.Changes, tr.MembersAdded, tr.MembersRemoved} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// BenchmarkEventData: the data of an event of each example written, with its
// transition digest, by the emitter (writer) and as the previous release did
// (json.Marshal, then the data read again for the digest).
func BenchmarkEventData(b *testing.B) {
	for name, raw := range exampleData(b) {
		if notFromDiff[events.Type(name)] {
			continue // made without the diff: no writer to compare
		}
		v := reflect.New(reflect.TypeOf(dataTypes[events.Type(name)]).Elem()).Interface()
		if err := json.Unmarshal(raw, v); err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/writer", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			var key [64]byte
			for b.Loop() {
				w := jsonWriter{b: buf[:0]}
				sp, err := w.eventData(v)
				if err != nil {
					b.Fatal(err)
				}
				sp.appendDigest(key[:0], w.b)
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				data, err := json.Marshal(v)
				if err != nil {
					b.Fatal(err)
				}
				reparseDigest(data)
			}
		})
	}
}
