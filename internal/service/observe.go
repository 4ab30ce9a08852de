package service

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// apiObserver records every API response (and failure) in the metrics.
func apiObserver(m *telemetry.Metrics) func(callcenter.ResponseInfo) {
	return func(ri callcenter.ResponseInfo) {
		ctx := context.Background() // instruments take a context for exemplars only
		m.APIRequests.Add(ctx, 1, metric.WithAttributes(attribute.String("operation", ri.Name), attribute.String("status", strconv.Itoa(ri.Status))))
		if ri.Rate.Known() {
			m.RateLimitTotal.Record(ctx, int64(ri.Rate.Total))
			m.RateLimitRemain.Record(ctx, int64(ri.Rate.Remaining))
		}
	}
}

// pollObserver records cycles and effective intervals, then calls the caller's
// hooks.
func pollObserver(m *telemetry.Metrics, also poll.Hooks, tracer trace.Tracer) poll.Hooks {
	return poll.Hooks{
		Tracer: tracer,
		Cycle: func(res string, d time.Duration, requests int, err error) {
			outcome := "ok"
			if err != nil {
				outcome = "error"
			}
			ctx := context.Background()
			m.CycleDuration.Record(ctx, d.Seconds(), metric.WithAttributes(attribute.String("resource", res), attribute.String("outcome", outcome)))
			m.CycleRequests.Add(ctx, int64(requests), metric.WithAttributes(attribute.String("resource", res)))
			if also.Cycle != nil {
				also.Cycle(res, d, requests, err)
			}
		},
		Intervals: func(eff map[string]time.Duration) {
			for res, d := range eff {
				m.Interval.Record(context.Background(), d.Seconds(), metric.WithAttributes(attribute.String("resource", res)))
			}
			if also.Intervals != nil {
				also.Intervals(eff)
			}
		},
		Committed: also.Committed,
	}
}

// publishObserver counts published events by type and records the detection
// delay: the acknowledgement time minus the event's time, which is the change's
// time where the API gives one (call, participant and metric times; users and teams
// carry none, so their events are stamped when seen and show only the relay's part).
// Type and time come with the record: the body is not decoded.
func publishObserver(m *telemetry.Metrics, also func(publish.Record)) func(publish.Record, *jetstream.PubAck) {
	return func(r publish.Record, ack *jetstream.PubAck) {
		if !ack.Duplicate {
			ctx := context.Background()
			typ := metric.WithAttributes(attribute.String("type", string(r.Type)))
			m.EventsPublished.Add(ctx, 1, typ)
			if !r.Time.IsZero() {
				m.DetectionDelay.Record(ctx, time.Since(r.Time).Seconds(), typ)
			}
		}
		if also != nil {
			also(r)
		}
	}
}

// truncationObserver records the original size of each event published reduced.
func truncationObserver(m *telemetry.Metrics) func(publish.Record, int) {
	return func(r publish.Record, size int) {
		m.TruncatedSize.Record(context.Background(), int64(size), metric.WithAttributes(attribute.String("type", string(r.Type))))
	}
}

// observeState registers the gauges read at scrape time: outbox depth and relay
// lag (one XLEN and one XRANGE), the share of the rate budget used, and publish
// errors.
func observeState(m *telemetry.Metrics, store *cursor.Store, lim *callcenter.Limiter, relay *publish.Relay) error {
	meter := m.Meter()
	depth, err := meter.Int64ObservableGauge("callbus.outbox.depth", metric.WithDescription("Events committed and not yet acknowledged by JetStream."), metric.WithUnit("{event}"))
	if err != nil {
		return err
	}
	lag, err := meter.Float64ObservableGauge("callbus.relay.lag", metric.WithDescription("Age of the oldest event waiting in the outbox (0 when empty)."), metric.WithUnit("s"))
	if err != nil {
		return err
	}
	used, err := meter.Float64ObservableGauge("callbus.rate_budget.used", metric.WithDescription("Share of this service's rate budget used in the current window (0 to 1)."), metric.WithUnit("1"))
	if err != nil {
		return err
	}
	pubErrs, err := meter.Int64ObservableCounter("callbus.publish.errors", metric.WithDescription("Failed publishes or outbox reads of the relay (each retried)."), metric.WithUnit("{error}"))
	if err != nil {
		return err
	}
	_, err = meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if n, err := store.OutboxLen(ctx); err == nil {
			o.ObserveInt64(depth, n)
		}
		if oldest, ok, err := store.OutboxOldest(ctx); err == nil {
			age := 0.0
			if ok {
				age = time.Since(oldest).Seconds()
			}
			o.ObserveFloat64(lag, age)
		}
		if st := lim.Stats(); st.Budget > 0 {
			o.ObserveFloat64(used, float64(st.UsedInWindow)/float64(st.Budget))
		}
		o.ObserveInt64(pubErrs, relay.Stats.Errors.Load())
		return nil
	}, depth, lag, used, pubErrs)
	return err
}

// redisErrors counts failed Redis commands (redis.Nil, a missing key, is not one).
type redisErrors struct{ m *telemetry.Metrics }

func (h redisErrors) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			h.m.RedisErrors.Add(context.Background(), 1)
		}
		return c, err
	}
}

func (h redisErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count(err)
		return err
	}
}

func (h redisErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.count(err)
		return err
	}
}

func (h redisErrors) count(err error) {
	if err != nil && !errors.Is(err, redis.Nil) && !errors.Is(err, context.Canceled) {
		h.m.RedisErrors.Add(context.Background(), 1)
	}
}
