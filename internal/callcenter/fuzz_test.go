package callcenter

import (
	"encoding/json"
	"testing"
)

// fuzzRoundTrip seeds f with fixtures and checks that decoding never panics and
// that whatever decodes round-trips (decode → encode → decode is equal).
func fuzzRoundTrip[T any](f *testing.F, files ...string) {
	for _, name := range files {
		f.Add(fixture(f, name))
	}
	for _, s := range []string{`{}`, `null`, `[]`, `""`, `{"id":"1e3"}`, `{"id":null,"created_time":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v := new(T)
		if err := json.Unmarshal(data, v); err != nil {
			return
		}
		assertRoundTrip(t, v)
	})
}

func FuzzDecodeCall(f *testing.F) {
	fuzzRoundTrip[Call](f, "call.json", "call_earlier.json", "call_drift.json")
}

func FuzzDecodeCallMetric(f *testing.F) {
	fuzzRoundTrip[CallMetric](f, "call_metric.json", "call_metric_drift.json", "call_metric_no_life_cycle.json")
}

func FuzzDecodeUser(f *testing.F) {
	fuzzRoundTrip[User](f, "user.json", "user_drift.json")
}

func FuzzDecodeUserStatus(f *testing.F) {
	fuzzRoundTrip[UserStatus](f, "user_status.json")
}

func FuzzDecodeTeam(f *testing.F) {
	fuzzRoundTrip[Team](f, "team.json")
}

func FuzzDecodeJob(f *testing.F) {
	f.Add([]byte(`{"id":1,"status":"started","job_data":null,"links":[]}`))
	fuzzRoundTrip[Job](f)
}

// FuzzDecodeCallsPage checks that list decoding never panics, whatever the shape.
func FuzzDecodeCallsPage(f *testing.F) {
	for _, name := range []string{"calls_page.json", "calls_page_no_meta.json", "call.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`[{"id":1}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := decodeList[Call](data, "calls")
		if err != nil {
			return
		}
		for i := range env.items {
			assertRoundTrip(t, &env.items[i])
		}
	})
}
