package main

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// headerCarrier reads and writes W3C trace context in NATS headers as they are:
// lower-case traceparent/tracestate (nats.Header.Get would canonicalize the key).
type headerCarrier nats.Header

func (c headerCarrier) Get(key string) string {
	if v := c[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c headerCarrier) Set(key, value string) { c[key] = []string{value} }

func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// startSpan continues the trace the poller started (poll cycle → publish) with a
// consumer span for this delivery.
func startSpan(ctx context.Context, tracer trace.Tracer, h nats.Header, subject string) (context.Context, trace.Span) {
	ctx = propagation.TraceContext{}.Extract(ctx, headerCarrier(h))
	return tracer.Start(ctx, "consume "+subject, trace.WithSpanKind(trace.SpanKindConsumer))
}

// newTracerProvider returns an OTLP/HTTP tracer provider when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set — the
// exporter reads the other OTEL_* variables itself — and otherwise a no-op one.
// shutdown flushes pending spans.
func newTracerProvider(ctx context.Context, getenv func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "consumer-example"))
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return p, p.Shutdown, nil
}
