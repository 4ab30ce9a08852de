package telemetry

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// AccountLabel is the Prometheus label naming the call-center account a series
// belongs to. The dashboard and the alerts group by it.
const AccountLabel = "account"

// Option configures NewMetrics.
type Option func(*options)

type options struct{ account string }

// WithAccount labels every callbus series with account=<account>. One process
// serves one account today, so the label rides on the meter provider's resource
// (exported as a constant label) rather than on each recording: no instrument
// call changes. Go and process metrics stay unlabelled.
func WithAccount(account string) Option { return func(o *options) { o.account = account } }

func newOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// exporter returns the Prometheus exporter's options for o: the account, when
// set, becomes a label of every series.
func (o options) exporter() []otelprom.Option {
	if o.account == "" {
		return nil
	}
	return []otelprom.Option{otelprom.WithResourceAsConstantLabels(func(kv attribute.KeyValue) bool {
		return kv.Key == AccountLabel
	})}
}

// provider returns the meter provider's options for o: the default resource,
// with the account when set.
func (o options) provider() ([]sdkmetric.Option, error) {
	if o.account == "" {
		return nil, nil
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String(AccountLabel, o.account)))
	if err != nil {
		return nil, fmt.Errorf("metrics resource: %w", err)
	}
	return []sdkmetric.Option{sdkmetric.WithResource(res)}, nil
}
