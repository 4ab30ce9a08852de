package sim

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Paging limits (spec: Limits). A per_page above maxPerPage, or any per_page or
// page that is not a positive integer, is refused with 422 rather than clamped, so
// a client's paging bug shows instead of silently reading less than it asked for.
const (
	defaultPerPage = 10
	maxPerPage     = 1000
)

// page is a validated page request.
type page struct{ per, num int }

// paging reads per_page and page; on a bad value it writes 422 and returns false.
func (rc *reqCtx) paging() (page, bool) {
	pg := page{per: defaultPerPage, num: 1}
	var errs []fieldError
	q := rc.r.URL.Query()
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n < 1:
			errs = append(errs, fieldError{"per_page", "must be a positive integer"})
		case n > maxPerPage:
			errs = append(errs, fieldError{"per_page", "must be less than or equal to 1000"})
		default:
			pg.per = n
		}
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fieldError{"page", "must be a positive integer"})
		} else {
			pg.num = n
		}
	}
	if len(errs) > 0 {
		rc.invalid(errs)
		return pg, false
	}
	return pg, true
}

// indexes returns, for a list of n items kept in ascending id order, the positions
// that page pg shows in the configured order. Random order reshuffles per request.
func (rc *reqCtx) indexes(n int, pg page) []int {
	lo := (pg.num - 1) * pg.per
	if lo >= n || lo < 0 {
		return nil
	}
	hi := min(lo+pg.per, n)
	out := make([]int, 0, hi-lo)
	switch rc.s.cfg.Order {
	case OldestFirst:
		for i := lo; i < hi; i++ {
			out = append(out, i)
		}
	case RandomOrder:
		perm := rc.s.shapes.Perm(n)
		out = append(out, perm[lo:hi]...)
	default:
		for i := lo; i < hi; i++ {
			out = append(out, n-1-i)
		}
	}
	return out
}

// totalPages is the number of pages n items span.
func totalPages(n, per int) int { return (n + per - 1) / per }

// timeRange reads by_time[from] and by_time[to]. bothRequired makes either one
// without the other an error (call metrics); otherwise each bound is optional
// (calls). from must be before to. The range is [from, to): from inclusive (field
// note 3), to exclusive. ok is false after a 422 has been written.
func (rc *reqCtx) timeRange(bothRequired bool) (from, to sec, set, ok bool) {
	q := rc.r.URL.Query()
	rawFrom, rawTo := q.Get("by_time[from]"), q.Get("by_time[to]")
	if rawFrom == "" && rawTo == "" {
		return 0, 0, false, true
	}
	var errs []fieldError
	if bothRequired && (rawFrom == "") != (rawTo == "") {
		if rawFrom == "" {
			errs = append(errs, fieldError{"by_time[from]", "is required when by_time[to] is given"})
		} else {
			errs = append(errs, fieldError{"by_time[to]", "is required when by_time[from] is given"})
		}
	}
	from, to = sec(minSec), sec(maxSec)
	if rawFrom != "" {
		t, err := parseTime(rawFrom)
		if err != nil {
			errs = append(errs, fieldError{"by_time[from]", "is not a valid date-time"})
		}
		from = toSec(t)
	}
	if rawTo != "" {
		t, err := parseTime(rawTo)
		if err != nil {
			errs = append(errs, fieldError{"by_time[to]", "is not a valid date-time"})
		}
		to = toSec(t)
	}
	if len(errs) == 0 && from >= to {
		errs = append(errs, fieldError{"by_time[from]", "must be earlier than by_time[to]"})
	}
	if len(errs) > 0 {
		rc.invalid(errs)
		return 0, 0, false, false
	}
	return from, to, true, true
}

const (
	minSec = -1 << 62
	maxSec = 1 << 62
)

// parseTime accepts RFC 3339 (any offset, optional fraction), the same without a
// zone (taken as UTC), a space instead of T, and a bare date. A '+' turned into a
// space by query decoding is restored.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, ' '); i > 10 {
		s = s[:i] + "+" + s[i+1:]
	}
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00",
		"2006-01-02 15:04:05", "2006-01-02"} {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// callRange returns the index range [lo, hi) of calls created within [from, to).
func (w *world) callRange(from, to sec) (int, int) {
	lo := sort.Search(len(w.calls), func(i int) bool { return w.calls[i].created >= from })
	hi := sort.Search(len(w.calls), func(i int) bool { return w.calls[i].created >= to })
	return lo, hi
}

// requireAdmin reports whether the key may write, writing 403 otherwise.
func (rc *reqCtx) requireAdmin(what string) bool {
	if rc.admin() {
		return true
	}
	rc.forbidden(what)
	return false
}
