package diff

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// dataTypes are the data of every event type the diff emits.
var dataTypes = map[events.Type]any{
	events.CallCreated:              &events.CallData{},
	events.CallEnded:                &events.CallData{},
	events.CallUpdated:              &events.CallUpdatedData{},
	events.ParticipantJoined:        &events.ParticipantData{},
	events.ParticipantStatusChanged: &events.ParticipantStatusData{},
	events.UserCreated:              &events.UserData{},
	events.UserUpdated:              &events.UserData{},
	events.UserDeleted:              &events.UserData{},
	events.UserStatusChanged:        &events.UserStatusData{},
	events.TeamCreated:              &events.TeamData{},
	events.TeamUpdated:              &events.TeamData{},
	events.MetricFinalized:          &events.MetricData{},
	events.MetricUpdated:            &events.MetricData{},
}

// notFromDiff are the event types the poller makes without the diff (between
// cycles, with event.New and encoding/json): the watermark and a resync's
// snapshots. The diff's tests leave them out; poll's and service's cover them.
var notFromDiff = map[events.Type]bool{
	events.AccountWatermark: true, events.CallSnapshot: true, events.UserSnapshot: true, events.TeamSnapshot: true,
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
		typ, ok := dataTypes[events.Type(name)]
		if !ok && notFromDiff[events.Type(name)] {
			continue
		}
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

// The data of every event type in a few plain forms: zero (nil pointers and
// lists), empty lists, and records whose strings hold HTML characters, quotes,
// control characters, U+2028, invalid UTF-8 and non-ASCII text.
func TestDataEncodingTable(t *testing.T) {
	odd := "José <b>&amp;</b> \"q\" \\ \t\n\u2028\u2029 \xff 日本 😀"
	at := time.Date(2026, 11, 24, 9, 30, 0, 123456789, time.FixedZone("x", 3600))
	cost, id := 0.000001, int64(7)
	call := events.Call{ID: 1, Direction: "incoming", PhoneNumber: odd, AssignedAgentName: &odd, CallNotes: odd,
		CreatedTime: at, UpdatedTime: at, ParentCallID: &id,
		Recording:           &events.Recording{ID: 2, URL: "https://x/?a=1&b=<2>", TranscriptionURL: &odd},
		RecordingToRedact:   &events.RecordingToRedact{URL: odd},
		IntegratedResources: []events.IntegratedResource{{ID: 3, IntegrationName: odd, Type: "<t>"}},
		Participants:        []events.Participant{{ID: 4, CallerName: &odd, Cost: &cost, EnqueuedTime: &at, CreatedTime: at}},
		ParallelCallGroups:  []json.RawMessage{json.RawMessage(`{"a": "<&>" }`), nil},
	}
	user := events.User{ID: 5, Name: odd, Language: &odd, LastSeenTime: &at, Teams: []events.TeamRef{{ID: 1}}}
	team := events.Team{ID: 6, Name: odd, Description: odd, Users: []events.UserRef{{ID: 5}}}
	metric := events.CallMetric{CallID: 1, Cost: &cost, Csat: &events.Csat{Outcome: json.RawMessage(`"<ok>"`)},
		Tags:      []events.Tag{{Raw: json.RawMessage(`{"name":"x&y"}`)}, {}},
		LifeCycle: []events.LifeCycleEvent{{Type: odd, QueueID: &id, Timestamp: at}, {Type: "hangup"}}}
	changes := []events.Change{{Field: odd, Previous: json.RawMessage(`"<a>"`), Current: json.RawMessage("null")}, {Field: "x"}}
	state := events.UserState{StatusName: odd}
	cases := map[string]any{
		"zero call":           &events.CallData{},
		"zero call updated":   &events.CallUpdatedData{},
		"zero participant":    &events.ParticipantData{},
		"zero status":         &events.ParticipantStatusData{},
		"zero user":           &events.UserData{},
		"zero user status":    &events.UserStatusData{},
		"zero team":           &events.TeamData{},
		"zero metric":         &events.MetricData{},
		"empty lists call":    &events.CallUpdatedData{Call: events.Call{Participants: []events.Participant{}, IntegratedResources: []events.IntegratedResource{}, ParallelCallGroups: []json.RawMessage{}}, Changes: []events.Change{}},
		"empty lists user":    &events.UserData{User: events.User{Teams: []events.TeamRef{}}, Changes: []events.Change{}},
		"empty lists status":  &events.UserStatusData{Changed: []string{}},
		"empty lists team":    &events.TeamData{Team: events.Team{Users: []events.UserRef{}}, MembersAdded: []int64{}, MembersRemoved: []int64{}, Changes: []events.Change{}},
		"empty lists metric":  &events.MetricData{Metric: events.CallMetric{Tags: []events.Tag{}, LifeCycle: []events.LifeCycleEvent{}}, Changes: []events.Change{}},
		"odd call":            &events.CallData{Call: call},
		"odd call updated":    &events.CallUpdatedData{Call: call, Changes: changes},
		"odd participant":     &events.ParticipantData{CallID: 1, Participant: call.Participants[0]},
		"odd status":          &events.ParticipantStatusData{Participant: call.Participants[0], Previous: events.CallStatus{Label: odd}},
		"odd user":            &events.UserData{User: user, Changes: changes},
		"odd user status":     &events.UserStatusData{User: user, Previous: state, Current: state, Changed: []string{odd}},
		"odd team":            &events.TeamData{Team: team, MembersAdded: []int64{1, -2}, Changes: changes},
		"odd metric":          &events.MetricData{CallID: 1, Metric: metric, Changes: changes},
		"invalid raw":         &events.CallUpdatedData{Changes: []events.Change{{Previous: json.RawMessage("{bad")}}},
		"time out of range":   &events.UserData{User: events.User{LastSeenTime: ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}},
		"float out of range":  &events.MetricData{Metric: events.CallMetric{Cost: ptr(math.Inf(1))}},
		"float with exponent": &events.MetricData{Metric: events.CallMetric{Cost: ptr(1e21)}},
	}
	for name, data := range cases {
		requireAsEncodingJSON(t, name, data)
	}
}
