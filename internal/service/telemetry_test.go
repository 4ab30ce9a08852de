package service

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/natstest"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/redistest"
	"github.com/callbus/callbus/internal/simtest"
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
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	s := testSettings(w, ns.URL(), rs.URL, "telemetry-1")
	s.HTTPAddr = simtest.FreeAddr(t)
	c := &cycles{n: map[string]int{}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, s, zerolog.Nop(), WithPollOptions(poll.WithCycleObserver(c.hook)), WithTracerProvider(tp))
	}()
	for range 30 {
		n := c.snapshot()[poll.ResCalls]
		simtest.WaitFor(t, 30*time.Second, "a calls cycle", func() bool { return c.snapshot()[poll.ResCalls] > n })
		w.Sim.Advance(10 * time.Second)
	}
	want := []string{
		`callbus_api_requests_total{operation="list calls",status="200"}`,
		"callbus_api_rate_limit ", "callbus_api_rate_limit_remaining ",
		`callbus_poll_interval_seconds{resource="calls"}`,
		`callbus_poll_cycle_duration_seconds_bucket{outcome="ok",resource="calls"`,
		`callbus_poll_requests_total{resource="calls"}`,
		`callbus_events_published_total{type="call.created"}`,
		`callbus_detection_delay_seconds_bucket{type="participant.status_changed"`,
		"callbus_outbox_depth ", "callbus_relay_lag_seconds ", "callbus_rate_budget_used_ratio ",
		"callbus_publish_errors_total ", "callbus_redis_errors_total ", "callbus_leader 1",
		"go_goroutines ", "process_resident_memory_bytes ",
	}
	var body, missing string
	defer func() {
		if t.Failed() && missing != "" {
			t.Logf("missing %s in:\n%s", missing, body)
		}
	}()
	simtest.WaitFor(t, 30*time.Second, "every metric on /metrics", func() bool {
		body = scrape(t, s.HTTPAddr)
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
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	spans := sr.Ended()
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
		name, parent := sp.Name(), parentName(sp)
		switch {
		case strings.HasPrefix(name, "poll ") && !sp.Parent().IsValid():
			count["cycle root"]++
		case name == "redis commit" && strings.HasPrefix(parent, "poll "):
			count["commit under cycle"]++
		case strings.HasPrefix(name, "HTTP GET") || name == "GET":
			if strings.HasPrefix(parent, "poll ") {
				count["api under cycle"]++
			}
		case strings.HasPrefix(name, "publish callcenter.acme."):
			if strings.HasPrefix(parent, "poll ") {
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
	if len(parts) != 4 || !publishIDs[parts[2]] {
		t.Fatalf("traceparent %q does not name a publish span", tp0[0])
	}
}
