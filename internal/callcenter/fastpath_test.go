package callcenter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/apijson"
	"github.com/callbus/callbus/internal/sim"
)

// The fast path of apijson (a scanner for well-formed JSON, which gives up
// to the general jsontext path on anything else) must decide everything as the
// general path does: the records, their rejections with field paths, the
// tolerance of drift, the errors. These tests decode the same bodies both ways.

// sameBothWays decodes data as a T on both paths and fails t if the records or
// the errors differ.
func sameBothWays[T any](t testing.TB, data []byte) {
	t.Helper()
	var fast, general T
	errFast := apijson.Decode(data, func(d *apijson.Decoder) error { return apijson.Into(d, &fast) })
	errGeneral := apijson.DecodeGeneral(data, func(d *apijson.Decoder) error { return apijson.Into(d, &general) })
	if fmt.Sprint(errFast) != fmt.Sprint(errGeneral) || !reflect.DeepEqual(fast, general) {
		t.Fatalf("%T from %.300q:\nfast    %v %+v\ngeneral %v %+v", fast, data, errFast, fast, errGeneral, general)
	}
}

// sameListBothWays decodes data as a list page of T on both paths and fails t
// if the items, meta, rejections or errors differ.
func sameListBothWays[T any](t testing.TB, data []byte, key string) {
	t.Helper()
	fast, errFast := decodeListBy[T](data, key, false, false)
	general, errGeneral := decodeListBy[T](data, key, false, true)
	if fmt.Sprint(errFast) != fmt.Sprint(errGeneral) || !reflect.DeepEqual(fast, general) {
		t.Fatalf("%s page from %.300q:\nfast    %v %+v\ngeneral %v %+v", key, data, errFast, fast, errGeneral, general)
	}
}

// allBothWays reads data as every record type and list of the API.
func allBothWays(t testing.TB, data []byte) {
	t.Helper()
	sameBothWays[events.Call](t, data)
	sameBothWays[events.CallMetric](t, data)
	sameBothWays[events.User](t, data)
	sameBothWays[events.Team](t, data)
	sameBothWays[UserStatus](t, data)
	sameBothWays[Job](t, data)
	sameListBothWays[events.Call](t, data, "calls")
	sameListBothWays[events.CallMetric](t, data, "call_metrics")
	sameListBothWays[events.User](t, data, "users")
	sameListBothWays[events.Team](t, data, "teams")
}

// variants returns data as it is and as drift could send it: compact, spread
// out, slashes escaped, names escaped, numbers as strings, cut short, followed
// by more.
func variants(data []byte) [][]byte {
	var compact, spread bytes.Buffer
	out := [][]byte{data}
	if json.Compact(&compact, data) == nil {
		out = append(out, compact.Bytes())
	}
	if json.Indent(&spread, data, "\t", "   ") == nil {
		out = append(out, spread.Bytes())
	}
	out = append(out,
		bytes.ReplaceAll(data, []byte("/"), []byte(`\/`)),
		bytes.ReplaceAll(data, []byte(`"id"`), []byte(`"\u0069d"`)),
		bytes.ReplaceAll(data, []byte(`": `), []byte(`": "`)), // invalid JSON mostly: the general path's errors
		bytes.ReplaceAll(data, []byte(`"seconds"`), []byte(`"sec\u00f6nds \u2028 \"q\""`)),
		bytes.ReplaceAll(data, []byte(`Z"`), []byte(`+02:00"`)),
		append(bytes.Clone(data), " x"...),
		data[:len(data)/2], data[:len(data)*9/10],
	)
	return out
}

// simPages returns list pages of a simulator with every drift variant on every
// record and the hostile faults (cut and malformed bodies among them).
func simPages(t testing.TB) [][]byte {
	t.Helper()
	clock := sim.NewManualClock(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	s, err := sim.New(sim.Config{Clock: clock, APIKey: "k", Seed: 7, Backlog: 60, Drift: 1, OffsetRate: 1, Hostile: sim.HostileFaults()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.Advance(30 * time.Minute)
	var out [][]byte
	for _, path := range []string{"/calls?per_page=20", "/calls?per_page=20&page=2", "/call_metrics?per_page=20&include=life_cycle", "/users", "/teams"} {
		for range 3 { // faults hit a read in a few
			req := httptest.NewRequest(http.MethodGet, "/api/v1"+path, nil)
			req.Header.Set("X-Api-Auth", "k")
			req.Header.Set("Accept", "application/json")
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			b, _ := io.ReadAll(rec.Result().Body)
			out = append(out, b)
		}
	}
	return out
}

func TestFastPathAsGeneralPath(t *testing.T) {
	var corpus [][]byte
	for _, name := range []string{"call.json", "call_drift.json", "call_earlier.json", "call_metric.json",
		"call_metric_drift.json", "call_metric_no_life_cycle.json", "call_metrics_page.json", "calls_page.json",
		"calls_page_no_meta.json", "export_job.json", "job.json", "team.json", "user.json", "user_drift.json",
		"user_status.json", "user_statuses.json"} {
		corpus = append(corpus, variants(fixture(t, name))...)
	}
	for _, page := range simPages(t) {
		corpus = append(corpus, variants(page)...)
	}
	drift := fixture(t, "call_drift.json")
	corpus = append(corpus,
		[]byte(`[`+string(fixture(t, "call.json"))+`,"x",null,{"id":"2","created_time":"0000-00-00 00:00:00"},`+string(drift)+`]`),
		[]byte(`{"calls":[{"id":1,"participants":[{"id":1,"enqueued_time":"2024-13-05T10:00:00Z"}]}],"calls":[],"meta":{"total_pages":"2"}}`),
		[]byte(`{"calls":[{"id":"1","created_time":"2024-03-05 10:00:00","updated_time":"2024-03-05","bill_duration":"1.0"}]}`),
	)
	rejected := 0
	for _, data := range corpus {
		allBothWays(t, data)
		env, _ := decodeList[events.Call](data, "calls")
		rejected += len(env.rejected)
	}
	if rejected == 0 {
		t.Error("no call of the corpus was rejected: the rejections go untested")
	}
}
