package callcenter

import (
	"context"
	"fmt"
	"github.com/callbus/callbus/events"
	"iter"
	"net/url"
)

// ListCalls reads one page of calls (GET /calls → {calls, meta}; meta may be
// absent). See ListCallsOptions.ByTime for the time filter.
func (c *Client) ListCalls(ctx context.Context, o ListCallsOptions) (Page[events.Call], error) {
	q := url.Values{}
	o.ByTime.setQuery(q)
	return listPage[events.Call](ctx, c, "calls", "/calls", "calls", o.ListOptions, q, o.ByTime.problems())
}

// CallsPages iterates over every page of calls from o.Page.
func (c *Client) CallsPages(ctx context.Context, o ListCallsOptions) iter.Seq2[Page[events.Call], error] {
	return pages(ctx, o.ListOptions, func(ctx context.Context, lo ListOptions) (Page[events.Call], error) {
		o.ListOptions = lo
		return c.ListCalls(ctx, o)
	})
}

// AllCalls iterates over every call.
func (c *Client) AllCalls(ctx context.Context, o ListCallsOptions) iter.Seq2[events.Call, error] {
	return items(c.CallsPages(ctx, o))
}

// GetCall reads one call (GET /calls/{id}).
func (c *Client) GetCall(ctx context.Context, id int64) (events.Call, error) {
	op := fmt.Sprintf("get call %d", id)
	if p := idProblems([]string{"call id"}, id); p != nil {
		return events.Call{}, invalid(op, p)
	}
	return getOne[events.Call](ctx, c, op, fmt.Sprintf("/calls/%d", id), "call")
}

// ListCallMetrics reads one page of call metrics (GET /call_metrics →
// {call_metrics, meta}; meta may be absent).
func (c *Client) ListCallMetrics(ctx context.Context, o ListCallMetricsOptions) (Page[events.CallMetric], error) {
	q := url.Values{}
	o.ByTime.setQuery(q)
	if o.IncludeLifeCycle {
		q.Set("include", IncludeLifeCycle)
	}
	return listPage[events.CallMetric](ctx, c, "call metrics", "/call_metrics", "call_metrics", o.ListOptions, q, o.ByTime.problems())
}

// CallMetricsPages iterates over every page of call metrics from o.Page.
func (c *Client) CallMetricsPages(ctx context.Context, o ListCallMetricsOptions) iter.Seq2[Page[events.CallMetric], error] {
	return pages(ctx, o.ListOptions, func(ctx context.Context, lo ListOptions) (Page[events.CallMetric], error) {
		o.ListOptions = lo
		return c.ListCallMetrics(ctx, o)
	})
}

// AllCallMetrics iterates over every call metric.
func (c *Client) AllCallMetrics(ctx context.Context, o ListCallMetricsOptions) iter.Seq2[events.CallMetric, error] {
	return items(c.CallMetricsPages(ctx, o))
}

// GetCallMetric reads the metric of one call (GET /calls/{call_id}/call_metrics).
func (c *Client) GetCallMetric(ctx context.Context, callID int64) (events.CallMetric, error) {
	op := fmt.Sprintf("get call metric of call %d", callID)
	if p := idProblems([]string{"call id"}, callID); p != nil {
		return events.CallMetric{}, invalid(op, p)
	}
	return getOne[events.CallMetric](ctx, c, op, fmt.Sprintf("/calls/%d/call_metrics", callID), "call_metric")
}
