package sim

import (
	"net/http"
	"strings"
)

// listCalls: GET /calls?per_page&page&by_time[from]&by_time[to] → 200
// {calls, meta}. by_time filters on created_time, [from, to), either bound alone,
// unless Config.CallsIgnoreByTime. Under drift meta may be missing.
func (s *Sim) listCalls(rc *reqCtx) {
	pg, ok := rc.paging()
	if !ok {
		return
	}
	lo, hi := 0, len(rc.w.calls)
	if !s.cfg.CallsIgnoreByTime {
		from, to, set, ok := rc.timeRange(false)
		if !ok {
			return
		}
		if set {
			lo, hi = rc.w.callRange(from, to)
		}
	}
	v := rc.view()
	var e enc
	e.obj()
	e.key("calls")
	e.arr()
	for _, i := range rc.indexes(hi-lo, pg) {
		v.call(&e, rc.w.calls[lo+i], apiCallParts)
	}
	e.end(']')
	if noMeta := v.shape().noMeta; !rc.s.hostile.noMeta() && !noMeta {
		rc.meta(&e, hi-lo, pg)
	}
	e.end('}')
	rc.send(http.StatusOK, e.bytes())
}

// meta writes the paging meta.
func (rc *reqCtx) meta(e *enc, n int, pg page) {
	e.key("meta")
	e.obj()
	e.key("total_count")
	e.int(int64(n))
	e.key("total_pages")
	e.int(int64(totalPages(n, pg.per)))
	e.key("current")
	e.int(int64(pg.num))
	e.end('}')
}

// getCall: GET /calls/{call_id} → 200 call, 404.
func (s *Sim) getCall(rc *reqCtx) {
	c, ok := rc.pathCall()
	if !ok {
		return
	}
	if rc.s.hostile.notFound(c) {
		rc.notFound("Call", c.id)
		return
	}
	var e enc
	rc.view().call(&e, c, apiCallParts)
	rc.send(http.StatusOK, e.bytes())
}

// pathCall resolves {call_id}, writing 404 when unknown.
func (rc *reqCtx) pathCall() (*call, bool) {
	id, ok := rc.pathID("call_id", "Call")
	if !ok {
		return nil, false
	}
	c := rc.w.call(id)
	if c == nil {
		rc.notFound("Call", id)
		return nil, false
	}
	return c, true
}

// includeLife reads include: "life_cycle" (or a comma list holding it); any other
// value is 422. ok is false after an error was written.
func (rc *reqCtx) includeLife() (life, ok bool) {
	raw := rc.r.URL.Query().Get("include")
	if raw == "" {
		return false, true
	}
	for _, part := range strings.Split(raw, ",") {
		if strings.TrimSpace(part) != "life_cycle" {
			rc.invalid([]fieldError{{"include", "must be life_cycle"}})
			return false, false
		}
	}
	return true, true
}

// listMetrics: GET /call_metrics?per_page&page&by_time[from]&by_time[to]&include →
// 200 {call_metrics}. by_time filters on created_time, [from, to); both bounds are
// required together. life_cycle only with include=life_cycle.
func (s *Sim) listMetrics(rc *reqCtx) {
	pg, ok := rc.paging()
	if !ok {
		return
	}
	from, to, set, ok := rc.timeRange(true)
	if !ok {
		return
	}
	life, ok := rc.includeLife()
	if !ok {
		return
	}
	lo, hi := 0, len(rc.w.calls)
	if set {
		lo, hi = rc.w.callRange(from, to)
	}
	v := rc.view()
	var e enc
	e.obj()
	e.key("call_metrics")
	e.arr()
	for _, i := range rc.indexes(hi-lo, pg) {
		v.metric(&e, rc.w.calls[lo+i], life)
	}
	e.end(']')
	e.end('}')
	rc.send(http.StatusOK, e.bytes())
}

// getMetric: GET /calls/{call_id}/call_metrics[?include=life_cycle] → 200 metric,
// 404 for an unknown call.
func (s *Sim) getMetric(rc *reqCtx) {
	c, ok := rc.pathCall()
	if !ok {
		return
	}
	life, ok := rc.includeLife()
	if !ok {
		return
	}
	var e enc
	rc.view().metric(&e, c, life)
	rc.send(http.StatusOK, e.bytes())
}
