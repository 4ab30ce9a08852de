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

// maxSpan is the longest date range of one export (two years, less a second for
// the inclusive end).
func spanEnd(from time.Time) time.Time { return from.AddDate(2, 0, 0).Add(-time.Second) }

// spans splits [Since, Until] into consecutive ranges the export accepts, oldest
// first, to the second (the last may overlap the one before by a second).
func (r Request) spans() []span {
	from, until := r.Since.UTC().Truncate(time.Second), r.Until.UTC().Truncate(time.Second)
	var out []span
	for {
		end := spanEnd(from)
		if !end.Before(until) {
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
