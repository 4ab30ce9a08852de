package telemetry

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Propagator is the W3C trace context: lower-case traceparent and tracestate.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// NewTracerProvider returns an OTLP/HTTP tracer provider when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set — the
// exporter reads the other OTEL_* variables itself — and otherwise a no-op one.
// shutdown flushes pending spans.
func NewTracerProvider(ctx context.Context, getenv func(string) string, version string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", "callbus"), attribute.String("service.version", version)))
	if err != nil {
		return nil, nil, fmt.Errorf("trace resource: %w", err)
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return p, p.Shutdown, nil
}

// Inject writes ctx's trace context into a header map (nil when there is none).
func Inject(ctx context.Context) map[string]string {
	c := propagation.MapCarrier{}
	Propagator.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// Extract returns ctx carrying the trace context found in headers.
func Extract(ctx context.Context, headers map[string]string) context.Context {
	return Propagator.Extract(ctx, propagation.MapCarrier(headers))
}
