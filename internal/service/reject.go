package service

import (
	"context"
	"sync"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/telemetry"
)

// maxRejectedKept bounds the rejections remembered for logging once; past it the
// memory starts afresh (a record still bad then is logged and counted again).
const maxRejectedKept = 10000

// rejectObserver counts and logs the API records the client left out of list
// pages (callcenter.Rejection): once per record and reason, although a bad record
// is left out again on every read until the API serves it correctly. The log line
// names the resource, id, field and reason, never the value. Safe for concurrent
// use.
func rejectObserver(ctx context.Context, m *telemetry.Metrics, log zerolog.Logger) func(callcenter.Rejection) {
	ctx = context.WithoutCancel(ctx)
	type seenKey struct {
		resource, field, reason, detail string
		id                              int64
	}
	var (
		mu   sync.Mutex
		seen = map[seenKey]bool{}
	)
	return func(r callcenter.Rejection) {
		k := seenKey{resource: r.Resource, field: r.Field, reason: r.Reason, id: r.ID}
		if r.ID == 0 {
			k.detail = r.Detail // without an id, the text tells records apart best
		}
		mu.Lock()
		if len(seen) >= maxRejectedKept {
			clear(seen)
		}
		first := !seen[k]
		seen[k] = true
		mu.Unlock()
		if !first {
			return
		}
		m.RecordsRejected.Add(ctx, 1, metric.WithAttributes(
			attribute.String("resource", r.Resource), attribute.String("reason", r.Reason)))
		e := log.Warn().Str("resource", r.Resource).Int64("id", r.ID).Str("field", r.Field).Str("reason", r.Reason).
			Str("detail", r.Detail)
		if r.Source != "" { // a report's record: not read again unless a live read lists it
			e.Str("source", r.Source).Msg("API record rejected and skipped; the rest of the report is read")
			return
		}
		e.Msg("API record rejected and skipped; read again on later cycles")
	}
}
