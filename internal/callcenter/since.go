package callcenter

import (
	"context"
	"errors"
	"github.com/callbus/callbus/events"
	"time"
)

// byTimeRetry is how long a Client reads /calls without by_time after seeing the
// API ignore it, before it tries the filter again.
const byTimeRetry = time.Hour

// errIgnoresByTime: /calls returned a record outside the by_time window.
var errIgnoresByTime = errors.New("the API ignores by_time on /calls")

// CallsSince hands each every call created within o.ByTime (From inclusive, To
// exclusive; both required), each call once, whatever the list order: a page at a
// time while /calls honours by_time, so memory holds a page, not the window. o.Page
// is ignored; o.PerPage is the page size (0: MaxPerPage).
//
// The spec lists no by_time for /calls; the real API honours it (field note 3).
// Every record is checked against the window: one outside it means the API
// ignores the filter. CallsSince then logs a warning and reads every page
// without the filter instead (keeping that read in memory, since its order is
// known only once read), handing on the calls created at or after From; it keeps
// doing so for an hour (byTimeRetry) before it tries the filter again. Calls
// already handed on before the switch are not handed on again.
//
// Records the client rejects (see Rejection) are left out of what each gets,
// and count as read when the window's completeness is checked. It stops at the
// first error: a failed page (errors name the page), or each's own error,
// returned as is.
func (c *Client) CallsSince(ctx context.Context, o ListCallsOptions, each func([]events.Call) error) error {
	if p := sinceProblems(o.ListOptions, o.ByTime); p != nil {
		return invalid("calls since", p)
	}
	per := perPageOr(o.PerPage)
	each = onlyOnce(callID, each)
	if c.callsByTimeIgnored() {
		return c.callsFallback(ctx, o.ByTime.From, per, each)
	}
	err := readWindow(ctx, c.callsInWindow, o.ByTime, per, callKeys, &c.callPieces, each)
	if !errors.Is(err, errIgnoresByTime) {
		return err
	}
	c.mu.Lock()
	c.byTimeIgnoredUntil = c.clock.Now().Add(byTimeRetry)
	c.mu.Unlock()
	c.log.Warn().Msg("calls: /calls ignores by_time; reading pages and filtering instead")
	return c.callsFallback(ctx, o.ByTime.From, per, each)
}

// CallMetricsSince hands each every call metric created within o.ByTime (From
// inclusive, To exclusive; both required), each metric once, whatever the list
// order, a page at a time (memory holds a page, not the window). The spec says
// metrics are listed "after" by_time[from]: the window sent starts a second
// earlier, so a metric created exactly at From is included. o.Page is ignored;
// o.PerPage is the page size (0: MaxPerPage). It stops at the first error: a
// failed page, or each's own error, returned as is.
func (c *Client) CallMetricsSince(ctx context.Context, o ListCallMetricsOptions, each func([]events.CallMetric) error) error {
	if p := sinceProblems(o.ListOptions, o.ByTime); p != nil {
		return invalid("call metrics since", p)
	}
	fetch := func(ctx context.Context, w TimeWindow, n, per int) (Page[events.CallMetric], error) {
		o.Page, o.PerPage, o.ByTime = n, per, w
		return c.ListCallMetrics(ctx, o)
	}
	w := TimeWindow{From: o.ByTime.From.Add(-time.Second), To: o.ByTime.To}
	return readWindow(ctx, fetch, w, perPageOr(o.PerPage), metricKeys, &c.metricPieces, onlyOnce(metricCallID, each))
}

// callsInWindow reads a page of /calls within a window and checks that every
// call lies within it (errIgnoresByTime otherwise). A call dated after the
// API's present (ServerTime, or our clock when later) proves nothing: a server
// that filters on a record's real time lists a record it dates ahead (a lie)
// within a window that ends now; nor does a call without created_time.
func (c *Client) callsInWindow(ctx context.Context, w TimeWindow, n, per int) (Page[events.Call], error) {
	pg, err := c.ListCalls(ctx, ListCallsOptions{ListOptions: ListOptions{Page: n, PerPage: per}, ByTime: w})
	if err != nil {
		return pg, err
	}
	// by_time goes to the second: From is sent rounded down, To up.
	from, to := w.From.Truncate(time.Second), w.To.Add(time.Second)
	present := c.clock.Now()
	if st := c.ServerTime(); st.After(present) {
		present = st
	}
	present = present.Add(time.Second)
	for _, call := range pg.Items {
		t := call.CreatedTime
		if t.IsZero() {
			continue // no created_time: the server placed it, it proves nothing
		}
		if t.Before(from) || (t.After(to) && !t.After(present)) {
			return pg, errIgnoresByTime
		}
	}
	return pg, nil
}

// callsByTimeIgnored reports whether /calls was seen ignoring by_time less than
// byTimeRetry ago.
func (c *Client) callsByTimeIgnored() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clock.Now().Before(c.byTimeIgnoredUntil)
}

func sinceProblems(o ListOptions, w TimeWindow) []string {
	p := append(o.problems(), w.problems()...)
	if w.IsZero() {
		p = append(p, "by_time: a window is required")
	}
	return p
}

func perPageOr(n int) int {
	if n == 0 {
		return MaxPerPage
	}
	return n
}

var (
	callKeys   = recordKeys[events.Call]{id: callID, created: func(c events.Call) time.Time { return c.CreatedTime }}
	metricKeys = recordKeys[events.CallMetric]{id: metricCallID, created: func(m events.CallMetric) time.Time { return m.CreatedTime }}
)

func callID(c events.Call) int64             { return c.ID }
func metricCallID(m events.CallMetric) int64 { return m.CallID }
