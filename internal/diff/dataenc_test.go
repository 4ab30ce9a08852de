package diff

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/event"
)

// dataTypes are the data of every event type the diff emits.
var dataTypes = map[event.Type]any{
	event.CallCreated:              &event.CallData{},
	event.CallEnded:                &event.CallData{},
	event.CallUpdated:              &event.CallUpdatedData{},
	event.ParticipantJoined:        &event.ParticipantData{},
	event.ParticipantStatusChanged: &event.ParticipantStatusData{},
	event.UserCreated:              &event.UserData{},
	event.UserUpdated:              &event.UserData{},
	event.UserDeleted:              &event.UserData{},
	event.UserStatusChanged:        &event.UserStatusData{},
	event.TeamCreated:              &event.TeamData{},
	event.TeamUpdated:              &event.TeamData{},
	event.MetricFinalized:          &event.MetricData{},
	event.MetricUpdated:            &event.MetricData{},
}

// requireAsEncodingJSON fails unless eventData writes data as json.Marshal does
// (or both fail), and its digest is the one encoding/json's reading gives, and
// the previous release's.
func requireAsEncodingJSON(t *testing.T, name string, data any) {
	t.Helper()
	want, werr := json.Marshal(data)
	w := jsonWriter{b: []byte("prefix")} // offsets must hold after earlier events' data
	sp, err := w.eventData(data)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%s: error %v, encoding/json's %v (%s)", name, err, werr, want)
	}
	if err != nil {
		return
	}
	got := w.b[len("prefix"):]
	for i := range sp {
		if sp[i] != ([2]int{}) {
			sp[i][0] -= len("prefix")
			sp[i][1] -= len("prefix")
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: wrote\n%s\nencoding/json writes\n%s", name, got, want)
	}
	d := string(sp.appendDigest(nil, got))
	if v1 := v1Digest(want); d != v1 {
		t.Fatalf("%s: digest %q, encoding/json's reading %q (%s)", name, d, v1, want)
	}
	if before := reparseDigest(want); d != before {
		t.Fatalf("%s: digest %q, the previous release's %q (%s)", name, d, before, want)
	}
}

// Every published example event's data, written by eventData: encoding/json's
// bytes and digest.
func TestDataEncodingExamples(t *testing.T) {
	for name, data := range exampleData(t) {
		typ, ok := dataTypes[event.Type(name)]
		if !ok {
			t.Fatalf("example %s: no data type", name)
		}
		v := reflect.New(reflect.TypeOf(typ).Elem()).Interface()
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("example %s: %v", name, err)
		}
		requireAsEncodingJSON(t, name, v)
	}
}

// The data of every event type, every field filled by reflection with values
// that encoding/json writes in its own ways (nil and empty lists, nil pointers,
// HTML characters, U+2028, invalid UTF-8, control characters, floats past the
// exponent cutoffs, times out of range, raw JSON with spaces or invalid): the
// same bytes and digests. A field added to a record is filled too, so the test
// fails until the writer writes it.
func TestDataEncodingAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for typ, proto := range dataTypes {
		for i := range 3000 {
			v := reflect.New(reflect.TypeOf(proto).Elem())
			fill(t, r, v.Elem())
			requireAsEncodingJSON(t, string(typ)+"#"+string(rune('0'+i%10)), v.Interface())
		}
	}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

var (
	oddStrings = []string{"", "plain", "José Ñ", "<b>&amp;</b>", "a\u2028b\u2029", "bad\xffutf8\xc3", "tab\tnl\ncr\r\b\f\x00\x1f\x7f",
		`quote"back\slash`, "日本語", "emoji 😀", "\xe2\x80", "e\u0301"}
	oddRaws = []string{"null", "true", "false", "0", "12", "-3", "1.50", "1e400", `"x"`, `"<a&b>"`, `"\u2028 `, "\"\u2028\"",
		`{"a": [1, 2 ] }`, " [ ] ", `{"id":1,"name":"x"}`, `[{"k":"v"}]`, "", "{bad", `"unterminated`, "01", `"é"`, "\"\xff\""}
	oddFloats = []float64{0, math.Copysign(0, -1), 1, -2.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125, math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1)}
	oddInts = []int64{0, 1, -1, 7, 255, 1 << 40, math.MaxInt64, math.MinInt64}
)

func oddTime(r *rand.Rand) time.Time {
	switch r.IntN(8) {
	case 0:
		return time.Time{}
	case 1:
		return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // encoding/json fails
	case 2:
		return time.Date(2026, 11, 24, 9, 30, 0, 0, time.FixedZone("x", -5*3600+1800))
	}
	return time.Unix(r.Int64N(4e9), r.Int64N(1e9)*int64(r.IntN(2))).UTC()
}

// fill sets v, and everything it holds, to random odd values.
func fill(t *testing.T, r *rand.Rand, v reflect.Value) {
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(oddTime(r)))
		return
	case rawType:
		if r.IntN(6) == 0 {
			v.SetZero()
		} else {
			v.SetBytes([]byte(oddRaws[r.IntN(len(oddRaws))]))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, r, v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, r, v.Field(i))
			}
		}
	case reflect.Slice:
		switch r.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			v.Set(reflect.MakeSlice(v.Type(), 1+r.IntN(3), 3))
			for i := range v.Len() {
				fill(t, r, v.Index(i))
			}
		}
	case reflect.String:
		if r.IntN(3) == 0 {
			b := make([]byte, r.IntN(6))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			v.SetString(string(b))
		} else {
			v.SetString(oddStrings[r.IntN(len(oddStrings))])
		}
	case reflect.Int, reflect.Int64:
		if r.IntN(2) == 0 {
			v.SetInt(oddInts[r.IntN(len(oddInts))])
		} else {
			v.SetInt(r.Int64N(1e6) - 1e3)
		}
	case reflect.Float64:
		v.SetFloat(oddFloats[r.IntN(len(oddFloats))] * float64(1+r.IntN(3)))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	default:
		t.Fatalf("fill: no odd values of %s: add them", v.Type())
	}
}
