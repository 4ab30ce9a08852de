package service

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/policy"
	"github.com/callbus/callbus/internal/telemetry"
)

// policyOptions apply the account's data policy to every record its API client
// decodes, counting each value hashed, masked or dropped
// (callbus_policy_fields_total{field,action}); none without a policy.
func policyOptions(ctx context.Context, s config.Settings, m *telemetry.Metrics) []callcenter.Option {
	if s.DataPolicy == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	counted := s.DataPolicy.WithObserver(func(path string, a policy.Action) {
		m.PolicyFields.Add(ctx, 1, metric.WithAttributes(attribute.String("field", path), attribute.String("action", string(a))))
	})
	return []callcenter.Option{callcenter.WithRedactor(counted)}
}
