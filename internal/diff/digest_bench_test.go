package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

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

// The digest reads the data as encoding/json does: the same digest for every
// example event and for odd data.
func TestTransitionDigestAsEncodingJSON(t *testing.T) {
	cases := exampleData(t)
	for i, s := range []string{`null`, `[]`, `{}`, `{"previous":null}`, `{"Previous":1,"current":[1,2]}`,
		`{"current":1,"current":2}`, `{"changes":[{"field":"x"}],"call":{"id":1}}`, `{"previous":`, `"x"`} {
		cases[string(rune('a'+i))] = []byte(s)
	}
	for name, data := range cases {
		if got, want := transitionDigest(data), v1Digest(data); got != want {
			t.Errorf("%s (%s): digest %q, encoding/json's %q", name, data, got, want)
		}
	}
}

// BenchmarkTransitionDigest is the digest of a participant.status_changed event's
// data (the call's participant beside the transition), once per event;
// BenchmarkTransitionDigestEncodingJSON the same read by encoding/json (before).
func BenchmarkTransitionDigest(b *testing.B) { benchDigest(b, transitionDigest) }

func BenchmarkTransitionDigestEncodingJSON(b *testing.B) { benchDigest(b, v1Digest) }

func benchDigest(b *testing.B, digest func([]byte) string) {
	var data []byte
	for name, d := range exampleData(b) {
		if name == "participant.status_changed" {
			data = d
		}
	}
	if data == nil {
		b.Fatal("no participant.status_changed example")
	}
	b.ReportAllocs()
	for b.Loop() {
		if digest(data) == "" {
			b.Fatal("no digest")
		}
	}
}
