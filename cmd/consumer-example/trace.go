package main

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
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
