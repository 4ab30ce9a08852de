package callcenter

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/testkit/cpumeter"
)

// Micro-benchmarks of list decoding, the poller's largest share of CPU in the
// backlog benchmark. Run with `make bench-micro BENCH=Decode PKGS=./internal/callcenter/`.

// benchPage is a list page of 100 copies of testdata/<item>.json under listKey.
func benchPage(b *testing.B, item, listKey string) []byte {
	b.Helper()
	one, err := os.ReadFile("testdata/" + item + ".json")
	if err != nil {
		b.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, one); err != nil {
		b.Fatal(err)
	}
	items := bytes.Repeat(append(compact.Bytes(), ','), 100)
	return []byte(`{"` + listKey + `":[` + string(items[:len(items)-1]) + `],"meta":{"total_count":100,"total_pages":1,"current":1}}`)
}

// BenchmarkDecodeCallsPage decodes a page of 100 calls as ListCalls does;
// BenchmarkDecodeScan is one validating pass over the same bytes (json.Valid),
// the floor a single-pass decoder would approach: the ratio of the two is how
// many times the decoder reads each byte.
func BenchmarkDecodeCallsPage(b *testing.B) {
	page := benchPage(b, "call", "calls")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	for b.Loop() {
		env, err := decodeList[events.Call](page, "calls")
		if err != nil || len(env.items) != 100 {
			b.Fatalf("decode: %d items, %v", len(env.items), err)
		}
	}
}

// BenchmarkDecodeCallsPageWithoutRaw decodes the page as the poller's client
// does (WithoutRaw).
func BenchmarkDecodeCallsPageWithoutRaw(b *testing.B) {
	page := benchPage(b, "call", "calls")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	for b.Loop() {
		env, err := decodeListRaw[events.Call](page, "calls", false)
		if err != nil || len(env.items) != 100 {
			b.Fatalf("decode: %d items, %v", len(env.items), err)
		}
	}
}

func BenchmarkDecodeMetricsPage(b *testing.B) {
	page := benchPage(b, "call_metric", "call_metrics")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	for b.Loop() {
		env, err := decodeList[events.CallMetric](page, "call_metrics")
		if err != nil || len(env.items) != 100 {
			b.Fatalf("decode: %d items, %v", len(env.items), err)
		}
	}
}

// BenchmarkDecodeMetricsPageWithoutRaw decodes the page as the poller's
// client does (WithoutRaw): copying each record's Raw is a fifth of
// BenchmarkDecodeMetricsPage.
func BenchmarkDecodeMetricsPageWithoutRaw(b *testing.B) {
	page := benchPage(b, "call_metric", "call_metrics")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	for b.Loop() {
		env, err := decodeListRaw[events.CallMetric](page, "call_metrics", false)
		if err != nil || len(env.items) != 100 {
			b.Fatalf("decode: %d items, %v", len(env.items), err)
		}
	}
}

func BenchmarkDecodeScan(b *testing.B) {
	page := benchPage(b, "call", "calls")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	for b.Loop() {
		if !json.Valid(page) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkDecodeCall decodes one call record (testdata/call.json) as Call's
// UnmarshalJSON does for a single-record response or an event's data.
func BenchmarkDecodeCall(b *testing.B) {
	one, err := os.ReadFile("testdata/call.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(one)))
	b.ReportAllocs()
	defer cpumeter.PerOp(b)()
	for b.Loop() {
		var c events.Call
		if err := json.Unmarshal(one, &c); err != nil || c.ID == 0 {
			b.Fatalf("decode: %v", err)
		}
	}
}
