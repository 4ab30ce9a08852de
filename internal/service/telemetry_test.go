package service

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/testkit/natstest"
	"github.com/callbus/callbus/internal/testkit/redistest"
	"github.com/callbus/callbus/internal/testkit/simtest"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestMetricsAndTraces runs the service with an in-memory span recorder, then
// checks /metrics for every metric with live values, the span tree (poll cycle →
// API requests, Redis commit, publish) and the traceparent header of the published
// messages.
func TestMetricsAndTraces(t *testing.T) {
	rs := redistest.Start(t)
	ns := natstest.Start(t)
	w := newWorld(t, nil)
	sr := tracetest.NewSpanRecorder()
	s := testSettings(w, ns.URL(), rs.URL, "telemetry-1")
	s.HTTPAddr = simtest.FreeAddr(t)
	svc := start(t, w, s, zerolog.Nop(), WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))))
	svc.advance(t, 30)
	checkMetrics(t, s.HTTPAddr)
	svc.stop(t)
	publishSpans := checkSpans(t, sr.Ended())
	checkTraceparent(t, ns, publishSpans)
}

// checkMetrics waits until /metrics on addr shows every metric with a live value,
// and checks that it does not show the API key.
func checkMetrics(t *testing.T, addr string) {
	t.Helper()
	want := []string{
		`callbus_api_requests_total{account="acme",operation="list calls",status="200"}`,
		`callbus_api_rate_limit{account="acme"} `, `callbus_api_rate_limit_remaining{account="acme"} `,
		`callbus_poll_interval_seconds{account="acme",resource="calls"}`,
		`callbus_poll_target_interval_seconds{account="acme",resource="calls"} 0.04`,
		`callbus_poll_cycle_duration_seconds_bucket{account="acme",outcome="ok",resource="calls"`,
		`callbus_poll_requests_total{account="acme",resource="calls"}`,
		`callbus_events_published_total{account="acme",type="call.created"}`,
		`callbus_detection_delay_seconds_bucket{account="acme",type="participant.status_changed"`,
		`callbus_outbox_depth{account="acme"} `, `callbus_relay_lag_seconds{account="acme"} `, `callbus_rate_budget_used_ratio{account="acme"} `,
		`callbus_rate_budget_share_ratio{account="acme"} 1`, `callbus_rate_budget_requests{account="acme"} `,
		`callbus_records_rejected_total{account="acme",resource="calls"} 0`,
		`callbus_publish_errors_total{account="acme"} `, `callbus_redis_errors_total{account="acme"} `, `callbus_leader{account="acme"} 1`,
		"go_goroutines ", "process_resident_memory_bytes ",
	}
	var body, missing string
	defer func() {
		if t.Failed() && missing != "" {
			t.Logf("missing %s in:\n%s", missing, body)
		}
	}()
	simtest.WaitFor(t, 30*time.Second, "every metric on /metrics", func() bool {
		body = scrape(t, addr)
		for _, m := range want {
			if !strings.Contains(body, m) {
				missing = m
				return false
			}
		}
		return true
	})
	if strings.Contains(body, testKey) {
		t.Fatal("the API key appears in /metrics")
	}
}

// checkSpans checks the span tree: poll cycles are roots, and Redis commits, API
// requests and publishes are their children. It returns the publish spans' ids.
func checkSpans(t *testing.T, spans []sdktrace.ReadOnlySpan) map[string]bool {
	t.Helper()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range spans {
		byID[sp.SpanContext().SpanID()] = sp
	}
	parentName := func(sp sdktrace.ReadOnlySpan) string {
		if p, ok := byID[sp.Parent().SpanID()]; ok {
			return p.Name()
		}
		return ""
	}
	count := map[string]int{}
	publishIDs := map[string]bool{}
	for _, sp := range spans {
		name, underCycle := sp.Name(), strings.HasPrefix(parentName(sp), "poll ")
		switch {
		case strings.HasPrefix(name, "poll ") && !sp.Parent().IsValid():
			count["cycle root"]++
		case name == "redis commit" && underCycle:
			count["commit under cycle"]++
		case (strings.HasPrefix(name, "HTTP GET") || name == "GET") && underCycle:
			count["api under cycle"]++
		case strings.HasPrefix(name, "publish callcenter.acme."):
			if underCycle {
				count["publish under cycle"]++
			}
			publishIDs[sp.SpanContext().SpanID().String()] = true
		}
	}
	for _, k := range []string{"cycle root", "commit under cycle", "api under cycle", "publish under cycle"} {
		if count[k] == 0 {
			names := map[string]int{}
			for _, sp := range spans {
				names[sp.Name()+" ← "+parentName(sp)]++
			}
			t.Fatalf("no %s span; spans seen: %v", k, names)
		}
	}
	return publishIDs
}

// checkTraceparent checks that the stream's first message carries the trace
// context of one of the publish spans, in a lower-case traceparent header.
func checkTraceparent(t *testing.T, ns *natstest.Server, publishSpans map[string]bool) {
	t.Helper()
	js, err := jetstream.New(ns.Conn(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), "CALLCENTER")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetMsg(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	tp0 := msg.Header["traceparent"]
	if len(tp0) != 1 {
		t.Fatalf("message has no lower-case traceparent header: %v", msg.Header)
	}
	parts := strings.Split(tp0[0], "-")
	if len(parts) != 4 || !publishSpans[parts[2]] {
		t.Fatalf("traceparent %q does not name a publish span", tp0[0])
	}
}
