package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func TestTracerProviderWithoutEndpointIsNoop(t *testing.T) {
	tp, shutdown, err := NewTracerProvider(t.Context(), func(string) string { return "" }, "test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("t").Start(t.Context(), "cycle")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Errorf("span of the no-op provider records: %+v", span.SpanContext())
	}
	span.End()
	if err := shutdown(t.Context()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// otlpSink is an OTLP/HTTP endpoint that keeps what it receives.
type otlpSink struct {
	mu     sync.Mutex
	paths  []string
	bodies []string
}

func (s *otlpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.paths = append(s.paths, r.URL.Path)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, spans reach the endpoint over OTLP/HTTP
// with the service's name and version, at the latest when shutdown flushes them.
func TestTracerProviderExportsOnShutdown(t *testing.T) {
	sink := &otlpSink{}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	// The exporter reads the OTEL_* variables itself; getenv decides whether it runs.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tp, shutdown, err := NewTracerProvider(t.Context(), os.Getenv, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("t").Start(t.Context(), "poll-cycle-span")
	if !span.IsRecording() {
		t.Fatal("span does not record")
	}
	span.End()
	if err := shutdown(t.Context()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	all := strings.Join(sink.bodies, "")
	if len(sink.paths) == 0 || sink.paths[0] != "/v1/traces" {
		t.Fatalf("requests to %v, want /v1/traces", sink.paths)
	}
	for _, want := range []string{"poll-cycle-span", "callbus", "v1.2.3"} {
		if !strings.Contains(all, want) {
			t.Errorf("exported spans lack %q", want)
		}
	}
}

func TestInjectExtract(t *testing.T) {
	if h := Inject(t.Context()); h != nil {
		t.Errorf("Inject without a span = %v, want nil", h)
	}
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("t").Start(t.Context(), "publish")
	defer span.End()
	h := Inject(ctx)
	if !strings.HasPrefix(h["traceparent"], "00-"+span.SpanContext().TraceID().String()+"-") {
		t.Fatalf("Inject = %v, want a traceparent of trace %s", h, span.SpanContext().TraceID())
	}
	got := trace.SpanContextFromContext(Extract(t.Context(), h))
	if got.TraceID() != span.SpanContext().TraceID() || got.SpanID() != span.SpanContext().SpanID() || !got.IsRemote() {
		t.Errorf("Extract = %+v, want the remote span %+v", got, span.SpanContext())
	}
}
