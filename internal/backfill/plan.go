package backfill

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
)

// Resources a backfill can read from the export.
var Resources = []string{callcenter.ExportCalls, callcenter.ExportCallMetrics, callcenter.ExportUsers, callcenter.ExportTeams}

// Request is what to backfill: calls (and metrics) created within [Since, Until],
// and the listed resources (users and teams are exported as they are now).
type Request struct {
	Since, Until time.Time
	Resources    []string
}

// Check validates the request, listing every problem.
func (r Request) Check() error {
	var errs []error
	if r.Since.IsZero() || !r.Since.Before(r.Until) {
		errs = append(errs, fmt.Errorf("since %s: must be before until %s", r.Since.Format(time.RFC3339), r.Until.Format(time.RFC3339)))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, errors.New("resources: at least one of "+strings.Join(Resources, ", ")))
	}
	for _, res := range r.Resources {
		if !slices.Contains(Resources, res) {
			errs = append(errs, fmt.Errorf("resource %q: want one of %s", res, strings.Join(Resources, ", ")))
		}
	}
	if slices.Contains(r.Resources, callcenter.ExportCallMetrics) && !slices.Contains(r.Resources, callcenter.ExportCalls) {
		errs = append(errs, errors.New("resources: call_metrics needs calls (a metric is announced for a known call only)"))
	}
	return errors.Join(errs...)
}

// span is one export job's date range.
type span struct{ from, to time.Time }

// Plans split a request into spans. A checkpoint names its plan
// (Checkpoint.Plan) because its Span counts spans of that plan: a backfill
// resumes with the plan it started with, whichever release resumes it.
const (
	// planTwoYears is that of the releases before the ramp, whose checkpoints
	// carry no plan: spans of two years.
	planTwoYears = 0
	// planRamp starts with a month and doubles (rampMonths), then two years.
	planRamp = 1
	// planLatest is the plan of a new backfill.
	planLatest = planRamp
)

// knownPlan reports whether this release can split a request by plan.
func knownPlan(plan int) bool { return plan == planTwoYears || plan == planRamp }

// rampMonths are the first spans of planRamp, in calendar months; the spans after
// them are of two years, as the export allows.
//
// Nothing is published before the first span's job and download are done, so
// the first span is short: a month, ~28,000 calls of a million over three years,
// downloaded in ~0.4 s after the job's wait of ~0.5 s, where a first two-year span
// took ~10.8 s (job and download). Each next span's job and download are made
// while the span before is published (prefetch). A download runs ~7x faster than
// publishing the same records, so the next span, twice as long, is downloaded in
// ~2/7 of the current one's publishing; with the job's wait it is ready in time
// whenever the current span takes over 0.5 s / (1 - 2/7) = 0.7 s to publish
// (~6,000 calls at the ~8,500 calls/s of a million in 118 s; a month of a million
// calls over three years takes ~3.3 s). A sparser
// history waits up to ~0.5 s for each of its first, small spans: less than its
// one two-year job took. Doubling rather than more: a span four times the one
// before needs that one to take 1.2 s, and leaves less margin when downloads are
// slower than 7x; each span costs an export job (a request and a few job reads, of
// the budget of 100 a minute): three years take 6 jobs instead of 2, ten years 9
// instead of 5.
var rampMonths = []int{1, 2, 4, 8, 16}

// spanMonths is the length of span i of plan, in calendar months.
func spanMonths(plan, i int) int {
	if plan == planRamp && i < len(rampMonths) {
		return rampMonths[i]
	}
	return 24
}

// spanEnd is the last second of the longest date range an export accepts from
// from (two years, less a second for the inclusive end).
func spanEnd(from time.Time) time.Time { return from.AddDate(2, 0, 0).Add(-time.Second) }

// tailMerge is the most a span shorter than two years takes beyond its length
// rather than leave it to a job of its own: a request of whole months
// (inclusive end: midnight to midnight) does not end in a job for its last
// second, nor one of 30 days in a job for the days February lacks. The span
// taking it is a month or more: its download grows by a quarter at most, still
// ahead of publishing the span before.
const tailMerge = 7 * 24 * time.Hour

// spans splits [Since, Until] into consecutive ranges the export accepts, oldest
// first, to the second, of the lengths plan gives (spanMonths; a span within
// tailMerge of Until takes the rest when that stays within two years; the last
// may overlap the one before by a second). Plan planTwoYears gives exactly the
// spans of the releases before the ramp.
func (r Request) spans(plan int) []span {
	from, until := r.Since.UTC().Truncate(time.Second), r.Until.UTC().Truncate(time.Second)
	var out []span
	for i := 0; ; i++ {
		end := from.AddDate(0, spanMonths(plan, i), 0).Add(-time.Second)
		if !end.Before(until) || (until.Sub(end) <= tailMerge && !until.After(spanEnd(from))) {
			if !from.Before(until) { // a last second alone: the export wants start before end
				from = until.Add(-time.Second) // records seen twice diff to nothing
			}
			return append(out, span{from, until})
		}
		out = append(out, span{from, end})
		from = end.Add(time.Second)
	}
}

// exportRequest is the export of span i of n: calls and metrics of its range;
// users and teams with the last span only (they have no date and are exported as
// they are now).
func (r Request) exportRequest(s span, last bool) callcenter.ExportRequest {
	req := callcenter.ExportRequest{OutputFormat: callcenter.FormatJSON,
		DateRange: &callcenter.DateRange{StartDate: s.from, EndDate: s.to}}
	// The report lists resources in the request's order: calls, users and teams
	// before call_metrics, so that one read of it serves both passes (passOf).
	for _, res := range []string{callcenter.ExportCalls, callcenter.ExportUsers, callcenter.ExportTeams, callcenter.ExportCallMetrics} {
		if !slices.Contains(r.Resources, res) {
			continue
		}
		switch res {
		case callcenter.ExportCalls:
			req.Resources = append(req.Resources, callcenter.ExportResource{Name: res,
				Include: []string{callcenter.IncludeParticipants, callcenter.IncludeRecording}})
		case callcenter.ExportCallMetrics:
			req.Resources = append(req.Resources, callcenter.ExportResource{Name: res, Include: []string{callcenter.IncludeLifeCycle}})
		default:
			if last {
				req.Resources = append(req.Resources, callcenter.ExportResource{Name: res})
			}
		}
	}
	return req
}
