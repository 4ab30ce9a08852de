package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/schemas"
)

// v1Digest is transitionDigest as encoding/json reads the data, the reference of
// TestTransitionDigestAsEncodingJSON.
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
	var d event.ParticipantStatusData
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
