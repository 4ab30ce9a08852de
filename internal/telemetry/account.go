package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
)

// AccountLabel is the Prometheus label naming the call-center account a series
// belongs to. The dashboard and the alerts group by it.
const AccountLabel = "account"

// Account returns the instruments of one account: the same instruments, on the
// same provider, with account=<name> added to every recording (the label comes
// last, so no attribute of a caller can replace it). Its scrape-time gauges
// (ObserveState, ObservePoller, ObserveBackfill) are observed with the label too,
// until Stop. One process serves many accounts with one provider this way.
// callbus_leader and callbus_redis_errors_total of the account show 0 from the
// start. Shutdown is the process's: call it on the Metrics of NewMetrics only.
func (m *Metrics) Account(name string) *Metrics {
	attr := accountAttr{metric.WithAttributes(attribute.String(AccountLabel, name)), name}
	a := &Metrics{
		APIRequests:        int64Counter{m.APIRequests, attr},
		RateLimitTotal:     int64Gauge{recorder: accountRecorder[int64](m.RateLimitTotal, attr)},
		RateLimitRemain:    int64Gauge{recorder: accountRecorder[int64](m.RateLimitRemain, attr)},
		Interval:           float64Gauge{recorder: accountRecorder[float64](m.Interval, attr)},
		TargetInterval:     float64Gauge{recorder: accountRecorder[float64](m.TargetInterval, attr)},
		CycleDuration:      float64Histogram{recorder: accountRecorder[float64](m.CycleDuration, attr)},
		CycleRequests:      int64Counter{m.CycleRequests, attr},
		EventsPublished:    int64Counter{m.EventsPublished, attr},
		DetectionDelay:     float64Histogram{recorder: accountRecorder[float64](m.DetectionDelay, attr)},
		TruncatedSize:      int64Histogram{recorder: accountRecorder[int64](m.TruncatedSize, attr)},
		Leader:             int64Gauge{recorder: accountRecorder[int64](m.Leader, attr)},
		RedisErrors:        int64Counter{m.RedisErrors, attr},
		RecordsRejected:    int64Counter{m.RecordsRejected, attr},
		PolicyFields:       int64Counter{m.PolicyFields, attr},
		WatermarkPublished: float64Gauge{recorder: accountRecorder[float64](m.WatermarkPublished, attr)},
		WatermarkInterval:  float64Gauge{recorder: accountRecorder[float64](m.WatermarkInterval, attr)},
		meter:              m.meter, handler: m.handler, provider: m.provider,
		account: name, attr: attr.opt, regs: &registrations{}, shared: m.shared,
	}
	a.RedisErrors.Add(context.Background(), 0)
	a.Leader.Record(context.Background(), 0)
	return a
}

// Name is the account these instruments label ("" for the process's).
func (m *Metrics) Name() string { return m.account }

// Stop unregisters the account's scrape-time gauges, so an account this replica
// no longer serves leaves them (its counters and histograms stay, as counters
// do). Stopping the process's Metrics does nothing.
func (m *Metrics) Stop() {
	if m.regs != nil {
		m.regs.stop()
	}
}

// observeOpts are the options of a scrape-time observation: the account's label.
func (m *Metrics) observeOpts() []metric.ObserveOption {
	if m.attr == nil {
		return nil
	}
	return []metric.ObserveOption{m.attr}
}

// register registers a scrape-time callback, kept for Stop: an account's through
// the process's callbacks of its kind (callbacks), the process's own on the
// meter.
func (m *Metrics) register(kind string, f metric.Callback, insts ...metric.Observable) error {
	if m.regs != nil && m.shared != nil {
		return m.shared.add(kind, m.regs, f, insts)
	}
	reg, err := m.meter.RegisterCallback(f, insts...)
	if err == nil && m.regs != nil {
		m.regs.add(func() { _ = reg.Unregister() }) // fails only when already unregistered
	}
	return err
}

// registrations are an account's scrape-time callbacks, as what undoes each.
type registrations struct {
	mu    sync.Mutex
	undos []func()
}

func (r *registrations) add(undo func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.undos = append(r.undos, undo)
}

func (r *registrations) stop() {
	r.mu.Lock()
	undos := r.undos
	r.undos = nil
	r.mu.Unlock()
	for _, undo := range undos {
		undo()
	}
}

// accountKey is the context key of ContextWithAccount.
type accountKey struct{}

// ContextWithAccount returns ctx naming the account its work is for: shared
// clients' hooks (the Redis error count) label what they record with it.
func ContextWithAccount(ctx context.Context, account string) context.Context {
	return context.WithValue(ctx, accountKey{}, account)
}

// AccountOf is the account ctx names ("" when none).
func AccountOf(ctx context.Context) string {
	a, _ := ctx.Value(accountKey{}).(string)
	return a
}

// Attributes returns the option that records attrs on m's instruments, with
// the account's label for an account's: one attribute set, made here once. Keep
// it for the recordings that repeat (an event's type) and pass it alone: m's
// instruments then record it as it is, where metric.WithAttributes merges the
// caller's set with the account's on every recording. On another account's
// instruments it is merged as any caller's option is, their label winning.
func (m *Metrics) Attributes(attrs ...attribute.KeyValue) metric.MeasurementOption {
	if m.account != "" {
		// Last: NewSet keeps the last value of a key, so no caller's account
		// attribute replaces the label.
		attrs = append(attrs[:len(attrs):len(attrs)], attribute.String(AccountLabel, m.account))
	}
	return labelled{metric.WithAttributeSet(attribute.NewSet(attrs...)), m.account}
}

// labelled is an option of Attributes: a whole set, the account's label in it.
type labelled struct {
	metric.MeasurementOption
	account string
}

// accountAttr is the account's label, as an option, and the account's name.
type accountAttr struct {
	opt     metric.MeasurementOption
	account string
}

// withAttr appends the account's attribute to a caller's options, last, without
// writing into the caller's slice; an option of the same account's Attributes,
// alone, already has it.
func withAttr[O any](opts []O, attr accountAttr, opt O) []O {
	if len(opts) == 1 {
		if l, ok := any(opts[0]).(labelled); ok && l.account == attr.account {
			return opts
		}
	}
	return append(opts[:len(opts):len(opts)], opt)
}

type int64Counter struct {
	metric.Int64Counter
	attr accountAttr
}

func (c int64Counter) Add(ctx context.Context, v int64, opts ...metric.AddOption) {
	c.Int64Counter.Add(ctx, v, withAttr[metric.AddOption](opts, c.attr, c.attr.opt)...)
}

// recording is what the account's gauges and histograms wrap.
type recording[N int64 | float64] interface {
	Record(context.Context, N, ...metric.RecordOption)
	Enabled(context.Context) bool
}

// recorder records into inst with the account's attribute added last. Go cannot
// embed a type parameter, so each instrument type below pairs it with its
// interface's marker (embedded.*), which satisfies the interface without a
// Record method of its own.
type recorder[N int64 | float64, I recording[N]] struct {
	inst I
	attr accountAttr
}

// accountRecorder is the recorder of inst with attr (N named, I inferred).
func accountRecorder[N int64 | float64, I recording[N]](inst I, attr accountAttr) recorder[N, I] {
	return recorder[N, I]{inst, attr}
}

func (r recorder[N, I]) Record(ctx context.Context, v N, opts ...metric.RecordOption) {
	r.inst.Record(ctx, v, withAttr[metric.RecordOption](opts, r.attr, r.attr.opt)...)
}

func (r recorder[N, I]) Enabled(ctx context.Context) bool { return r.inst.Enabled(ctx) }

type (
	int64Gauge struct {
		recorder[int64, metric.Int64Gauge]
		embedded.Int64Gauge
	}
	float64Gauge struct {
		recorder[float64, metric.Float64Gauge]
		embedded.Float64Gauge
	}
	int64Histogram struct {
		recorder[int64, metric.Int64Histogram]
		embedded.Int64Histogram
	}
	float64Histogram struct {
		recorder[float64, metric.Float64Histogram]
		embedded.Float64Histogram
	}
)
