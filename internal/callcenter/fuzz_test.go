package callcenter

import (
	"encoding/json"
	"github.com/callbus/callbus/events"
	"reflect"
	"testing"
)

// fuzzRoundTrip seeds f with fixtures and checks that decoding never panics,
// that apijson's fast path decodes as its general path, and that whatever
// decodes round-trips (decode → encode → decode is equal).
func fuzzRoundTrip[T any](f *testing.F, files ...string) {
	for _, name := range files {
		f.Add(fixture(f, name))
	}
	for _, s := range []string{`{}`, `null`, `[]`, `""`, `{"id":"1e3"}`, `{"id":null,"created_time":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameBothWays[T](t, data)
		v := new(T)
		if err := json.Unmarshal(data, v); err != nil {
			return
		}
		assertRoundTrip(t, v)
	})
}

func FuzzDecodeCall(f *testing.F) {
	fuzzRoundTrip[events.Call](f, "call.json", "call_earlier.json", "call_drift.json")
}

func FuzzDecodeCallMetric(f *testing.F) {
	fuzzRoundTrip[events.CallMetric](f, "call_metric.json", "call_metric_drift.json", "call_metric_no_life_cycle.json")
}

func FuzzDecodeUser(f *testing.F) {
	fuzzRoundTrip[events.User](f, "user.json", "user_drift.json")
}

func FuzzDecodeUserStatus(f *testing.F) {
	fuzzRoundTrip[UserStatus](f, "user_status.json")
}

func FuzzDecodeTeam(f *testing.F) {
	fuzzRoundTrip[events.Team](f, "team.json")
}

func FuzzDecodeJob(f *testing.F) {
	f.Add([]byte(`{"id":1,"status":"started","job_data":null,"links":[]}`))
	fuzzRoundTrip[Job](f)
}

// FuzzDecodeCallsPage checks that list decoding never panics, whatever the
// shape, and that apijson's fast path reads a page as its general path.
func FuzzDecodeCallsPage(f *testing.F) {
	for _, name := range []string{"calls_page.json", "calls_page_no_meta.json", "call.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`[{"id":1}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameListBothWays[events.Call](t, data, "calls")
		env, err := decodeList[events.Call](data, "calls")
		if err != nil {
			return
		}
		for i := range env.items {
			assertRoundTrip(t, &env.items[i])
		}
	})
}

// FuzzDecodeListItems checks the one-pass page decoder against each item decoded
// on its own (split by encoding/json, decoded by Call's UnmarshalJSON, judged as
// decodeItem judges it): the same records kept, equal, and the same rejections, so
// that reading a page in one pass changes nothing an item decides alone. Fuzz it
// with a small -fuzzminimizetime (2s): minimizing a page of fixtures is slow.
func FuzzDecodeListItems(f *testing.F) {
	for _, name := range []string{"call.json", "call_earlier.json", "call_drift.json"} {
		f.Add([]byte("[" + string(fixture(f, name)) + `,"x",{"id":"2","created_time":"2024-03-05 10:00:00","participants":[{"id":1}]}]`))
	}
	f.Add([]byte(`[{"id":1,"id":null,"created_time":"2024-03-05T10:00:00Z"},{"id":2,"created_time":"2024-03-05T10:00:00Z","bill_duration":[1]},null]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var raws []json.RawMessage
		if json.Unmarshal(data, &raws) != nil || raws == nil {
			return // not an array (null unmarshals as none: a body decodeList refuses)
		}
		env, err := decodeList[events.Call](data, "calls")
		if err != nil {
			t.Fatalf("page of %d items: %v", len(raws), err)
		}
		var (
			items    []events.Call
			rejected []Rejection
		)
		for _, raw := range raws {
			var c events.Call
			if err := json.Unmarshal(raw, &c); err != nil {
				r := rejectionOf(err)
				r.Resource, r.ID = "calls", itemID(raw)
				rejected = append(rejected, r)
				continue
			}
			if field, reason := insane(&c); reason != "" {
				rejected = append(rejected, Rejection{Resource: "calls", ID: itemID(raw), Field: field, Reason: reason, Detail: field + ": " + reason})
				continue
			}
			items = append(items, c)
		}
		if len(env.items) != len(items) || len(env.rejected) != len(rejected) {
			t.Fatalf("one pass kept %d, rejected %+v; alone kept %d, rejected %+v", len(env.items), env.rejected, len(items), rejected)
		}
		for i := range items {
			if !reflect.DeepEqual(env.items[i], items[i]) {
				t.Fatalf("item %d:\none pass %+v\nalone    %+v", i, env.items[i], items[i])
			}
		}
		for i := range rejected {
			if env.rejected[i] != rejected[i] {
				t.Fatalf("rejection %d:\none pass %+v\nalone    %+v", i, env.rejected[i], rejected[i])
			}
		}
	})
}
