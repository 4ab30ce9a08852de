package backfill

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/callbus/callbus/internal/apijson"
)

// decodedID is the id a decoder reads from a record: what the scanner's note
// must agree with whenever it says it read one.
func decodedID(raw []byte, key string) int64 {
	var id int64
	_ = apijson.Object("r", raw, apijson.Key(key, apijson.Int(&id)))
	return id
}

// notedIDs scans doc, an array of records, noting key, one byte at a time (so
// that every record crosses slab refills) and whole, and returns per record
// the note and the raw bytes.
func notedIDs(t *testing.T, doc, key string) ([]idNote, [][]byte) {
	t.Helper()
	var notes [2][]idNote
	var raws [][]byte
	for i, sc := range []*scanner{newScanner(iotest.OneByteReader(strings.NewReader(doc))), newScanner(strings.NewReader(doc))} {
		sc.idKey = []byte(key)
		err := sc.array("records", func(raw []byte) error {
			notes[i] = append(notes[i], sc.id)
			if i == 1 {
				raws = append(raws, append([]byte(nil), raw...))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("scan %.80q: %v", doc, err)
		}
	}
	for j := range notes[0] {
		if notes[0][j] != notes[1][j] {
			t.Fatalf("record %d of %.80q: noted %+v read a byte at a time, %+v whole", j, doc, notes[0][j], notes[1][j])
		}
	}
	return notes[1], raws
}

// The scanner's note of a record's id agrees with the decoder's reading
// whenever it gives one: the member at the record's own level (not a nested
// one), its last copy, zero when absent; and it gives none where only a decoder
// can tell (escaped names, null, strings, fractions, exponents, huge numbers,
// a record that is not an object).
func TestScannerNotesIDs(t *testing.T) {
	records := []struct {
		raw  string
		read bool // the scanner reads it itself
	}{
		{`{"id":42,"call_id":7}`, true},
		{`{ "id" : 42 , "x":"a,b:c}" }`, true},
		{`{"x":{"id":1},"id":2,"p":[{"id":3}]}`, true},
		{`{"id":1,"id":9}`, true},
		{`{"p":[{"id":3}]}`, true},
		{`{}`, true},
		{`{"ID":5}`, true},
		{`{"id":-4}`, true},
		{`{"id":0}`, true},
		{`{"i\u0064":5}`, false},
		{`{"x\"id":5,"id":6}`, false},
		{`{"id":null}`, false},
		{`{"id":"12"}`, false},
		{`{"id":1.5}`, false},
		{`{"id":1e3}`, false},
		{`{"id":12345678901234567890}`, false},
		{`{"id":{"id":1}}`, false},
		{`[1,2]`, false},
		{`"id"`, false},
		{`null`, false},
	}
	for _, key := range []string{"id", "call_id"} {
		var doc strings.Builder
		doc.WriteString("[")
		for i, r := range records {
			if i > 0 {
				doc.WriteString(",\n")
			}
			doc.WriteString(r.raw)
		}
		doc.WriteString("]")
		notes, raws := notedIDs(t, doc.String(), key)
		if len(notes) != len(records) {
			t.Fatalf("%d notes for %d records", len(notes), len(records))
		}
		for i, r := range records {
			n := notes[i]
			if key == "id" && n.ok != r.read {
				t.Errorf("%s: noted %+v, want read %v", r.raw, n, r.read)
			}
			if n.ok && n.id != decodedID(raws[i], key) {
				t.Errorf("%s, %s: noted %d, the decoder reads %d", r.raw, key, n.id, decodedID(raws[i], key))
			}
		}
	}
}

// Records of random shape: the scanner's note agrees with the decoder's
// reading wherever it gives one, and gives one for most.
func TestScannerNotesIDsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var doc strings.Builder
	doc.WriteString("[")
	const n = 2000
	for i := range n {
		if i > 0 {
			doc.WriteString(",")
		}
		doc.WriteString(randomRecord(rng, 0))
	}
	doc.WriteString("]")
	for _, key := range []string{"id", "call_id"} {
		notes, raws := notedIDs(t, doc.String(), key)
		read := 0
		for i, note := range notes {
			if !note.ok {
				continue
			}
			read++
			if want := decodedID(raws[i], key); note.id != want {
				t.Fatalf("%s, %s: noted %d, the decoder reads %d", raws[i], key, note.id, want)
			}
		}
		if read < n/2 {
			t.Errorf("%s: the scanner read %d of %d ids itself, want most", key, read, n)
		}
	}
}

// randomRecord is a JSON object of random members: ids (plain, negative,
// null, strings, fractions), nested objects and arrays holding ids too,
// strings with escapes, quotes, braces and commas, white space.
func randomRecord(rng *rand.Rand, depth int) string {
	names := []string{"id", "call_id", "x", "p", `q\"r`, "updated_time"}
	if depth == 0 && rng.IntN(40) == 0 {
		names = append(names, `\u0069d`)
	}
	var b strings.Builder
	b.WriteString("{")
	for j := range rng.IntN(6) {
		if j > 0 {
			b.WriteString([]string{",", " ,", ",\n "}[rng.IntN(3)])
		}
		b.WriteString(`"` + names[rng.IntN(len(names))] + `"`)
		b.WriteString([]string{":", " : "}[rng.IntN(2)])
		b.WriteString(randomValue(rng, depth))
	}
	b.WriteString("}")
	return b.String()
}

func randomValue(rng *rand.Rand, depth int) string {
	switch k := rng.IntN(10); {
	case k < 4:
		return strconv.FormatInt(rng.Int64N(1_000_000)-1000, 10)
	case k == 4:
		return "null"
	case k == 5:
		return []string{`"12"`, `1.5`, `2e3`, `true`, `"a,\"b}:c"`, `"\\"`}[rng.IntN(6)]
	case k == 6 && depth < 2:
		return randomRecord(rng, depth+1)
	case k == 7 && depth < 2:
		return "[" + randomRecord(rng, depth+1) + "," + randomValue(rng, depth+1) + "]"
	default:
		return `"` + []string{"plain", "with, comma", "with } brace", `with \" quote`, "id"}[rng.IntN(5)] + `"`
	}
}

// Whatever the bytes, the scanner's note of an id agrees with the decoder's
// reading of every well-formed record it gives one for, and scanning never
// panics; a malformed record may be noted where the decoder reads nothing (it
// only adds a candidate to the duplicates' check, which decodes).
func FuzzScannerNotesIDs(f *testing.F) {
	for _, seed := range []string{`{"id":42}`, `{"x":{"id":1},"id":2}`, `{"id":1,"id":9}`, `{"i\u0064":5}`,
		`{"id":null}`, `{"id":1e3}`, `{"a":"}\"","id":3}`, `[1]`, `{"id":-0}`, `{"id":007}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rec string) {
		sc := newScanner(strings.NewReader("[" + rec + "]"))
		sc.idKey = []byte("id")
		_ = sc.array("records", func(raw []byte) error {
			if sc.id.ok && json.Valid(raw) {
				if want := decodedID(raw, "id"); sc.id.id != want {
					t.Fatalf("%q: noted %d, the decoder reads %d", raw, sc.id.id, want)
				}
			}
			return nil
		})
	})
}
