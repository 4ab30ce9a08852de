package service

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/event"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/publish"
	"github.com/callbus/callbus/internal/telemetry"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The observers below translate what the parts report into the instruments of
// telemetry. Where a part reports without a context (the API client's response
// hook, the relay's OnPublished) they record with the service's context, which
// outlives shutdown (WithoutCancel) so the last records are kept.

// apiObserver records every API response (and failure) in the metrics.
func apiObserver(ctx context.Context, m *telemetry.Metrics) func(callcenter.ResponseInfo) {
	ctx = context.WithoutCancel(ctx)
	// Each operation's and status's attributes made once (see cycleObserver);
	// the client may answer from several goroutines.
	var mu sync.Mutex
	opts := map[apiOutcome]metric.MeasurementOption{}
	return func(ri callcenter.ResponseInfo) {
		k := apiOutcome{ri.Name, ri.Status}
		mu.Lock()
		o := opts[k]
		if o == nil {
			o = m.Attributes(attribute.String("operation", ri.Name), attribute.String("status", strconv.Itoa(ri.Status)))
			opts[k] = o
		}
		mu.Unlock()
		m.APIRequests.Add(ctx, 1, o)
		if ri.Rate.Known() {
			m.RateLimitTotal.Record(ctx, int64(ri.Rate.Total))
			m.RateLimitRemain.Record(ctx, int64(ri.Rate.Remaining))
		}
	}
}

// apiOutcome is an API response's operation and status (0: no response).
type apiOutcome struct {
	name   string
	status int
}

// cycleObserver records each poll cycle's duration, outcome and requests.
func cycleObserver(m *telemetry.Metrics) poll.CycleObserver {
	// Each resource's (and outcome's) attributes made once (telemetry.Metrics.
	// Attributes): made at every cycle of every account, they were a tenth of a
	// fleet replica's allocations with the interval gauge's below. The poller
	// calls it from its one goroutine.
	durations := map[[2]string]metric.MeasurementOption{}
	requested := map[string]metric.MeasurementOption{}
	return func(ctx context.Context, res string, d time.Duration, requests int, err error) {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		dk := [2]string{res, outcome}
		if durations[dk] == nil {
			durations[dk] = m.Attributes(attribute.String("resource", res), attribute.String("outcome", outcome))
		}
		if requested[res] == nil {
			requested[res] = m.Attributes(attribute.String("resource", res))
		}
		m.CycleDuration.Record(ctx, d.Seconds(), durations[dk])
		m.CycleRequests.Add(ctx, int64(requests), requested[res])
	}
}

// intervalObserver records the effective interval of each resource when it
// changed (a gauge keeps its last value; the poller calls this after every
// cycle, from its one goroutine).
func intervalObserver(m *telemetry.Metrics) func(context.Context, map[string]time.Duration) {
	last := map[string]time.Duration{}
	opts := map[string]metric.MeasurementOption{}
	return func(ctx context.Context, eff map[string]time.Duration) {
		for res, d := range eff {
			if was, ok := last[res]; ok && was == d {
				continue
			}
			last[res] = d
			if opts[res] == nil {
				opts[res] = m.Attributes(attribute.String("resource", res))
			}
			m.Interval.Record(ctx, d.Seconds(), opts[res])
		}
	}
}

// publishObserver counts published events by type and records the detection
// delay: the acknowledgement time minus the event's time, which is the change's
// time where the API gives one (call, participant and metric times; users and teams
// carry none, so their events are stamped when seen and show only the relay's part).
// Type and time come with the record: the body is not decoded. The relay hands
// over a batch at a time: one clock reading and one count per type a batch, and
// each type's attributes made once (see telemetry.Metrics.Attributes).
func publishObserver(ctx context.Context, m *telemetry.Metrics, also func([]publish.Published)) func([]publish.Published) {
	// Named, the context also comes first of WithoutCancel's in the SDK's lookup
	// (of the span, for exemplars, at each recording): the Value method of
	// WithoutCancel's own context allocates on every call.
	ctx = telemetry.ContextWithAccount(context.WithoutCancel(ctx), m.Name())
	var mu sync.Mutex // the relay calls from one goroutine; a drain after a run is another
	attrs := map[events.Type]typeOpts{}
	counts := map[events.Type]int64{}
	return func(ps []publish.Published) {
		mu.Lock()
		now := time.Now()
		for _, p := range ps {
			if p.Ack.Duplicate {
				continue
			}
			counts[p.Type]++
			if p.Type == events.AccountWatermark {
				m.WatermarkPublished.Record(ctx, float64(now.UnixNano())/1e9)
			}
			if !p.Time.IsZero() {
				m.DetectionDelay.Record(ctx, now.Sub(p.Time).Seconds(), optsOf(m, attrs, p.Type).record...)
			}
		}
		for typ, n := range counts {
			m.EventsPublished.Add(ctx, n, optsOf(m, attrs, typ).add...)
		}
		clear(counts)
		mu.Unlock()
		if also != nil {
			also(ps)
		}
	}
}

// typeOpts are the options recording an event type, as the instruments take
// them: slices made once, since a slice made for each call escapes.
type typeOpts struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// optsOf returns the options recording type=typ on m, made on first use.
func optsOf(m *telemetry.Metrics, known map[events.Type]typeOpts, typ events.Type) typeOpts {
	o, ok := known[typ]
	if !ok {
		a := m.Attributes(attribute.String("type", string(typ)))
		o = typeOpts{add: []metric.AddOption{a}, record: []metric.RecordOption{a}}
		known[typ] = o
	}
	return o
}

// truncationObserver records the original size of each event published reduced.
func truncationObserver(ctx context.Context, m *telemetry.Metrics) func(event.Committed, int) {
	ctx = context.WithoutCancel(ctx)
	return func(r event.Committed, size int) {
		m.TruncatedSize.Record(ctx, int64(size), metric.WithAttributes(attribute.String("type", string(r.Type))))
	}
}

// stateOf says where the scrape-time gauges read: the store's outbox, the
// limiter's window and budget, and the relay's error count.
func stateOf(store *cursor.Store, lim *callcenter.Limiter, relay *publish.Relay, share float64) telemetry.State {
	if share == 0 {
		share = callcenter.DefaultShare
	}
	return telemetry.State{
		Share: share,
		Budget: func() (int64, bool) {
			st := lim.Stats()
			return int64(st.Budget), st.Budget > 0
		},
		OutboxDepth:  store.OutboxLen,
		OutboxOldest: store.OutboxOldest,
		BudgetUsed: func() (float64, bool) {
			st := lim.Stats()
			if st.Budget <= 0 {
				return 0, false
			}
			return float64(st.UsedInWindow) / float64(st.Budget), true
		},
		PublishErrors: relay.Stats.Errors.Load,
	}
}

// redisErrors counts failed Redis commands (redis.Nil, a missing key, is not one)
// of the process's one client, labelled with the account the command's context
// names (telemetry.ContextWithAccount); the process's own commands (the fleet's
// membership) go unlabelled.
type redisErrors struct{ m *telemetry.Metrics }

func (h redisErrors) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			h.add(context.WithoutCancel(ctx))
		}
		return c, err
	}
}

func (h redisErrors) add(ctx context.Context) {
	if a := telemetry.AccountOf(ctx); a != "" {
		h.m.RedisErrors.Add(ctx, 1, metric.WithAttributes(attribute.String(telemetry.AccountLabel, a)))
		return
	}
	h.m.RedisErrors.Add(ctx, 1)
}

func (h redisErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count(ctx, err)
		return err
	}
}

func (h redisErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.count(ctx, err)
		return err
	}
}

func (h redisErrors) count(ctx context.Context, err error) {
	if err != nil && !errors.Is(err, redis.Nil) && !errors.Is(err, context.Canceled) {
		h.add(context.WithoutCancel(ctx))
	}
}
