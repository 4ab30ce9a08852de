package callcenter

import (
	"fmt"
	"slices"
	"time"
)

// exportIncludes lists, per exportable resource, the include values it accepts
// (nil: include is not accepted).
func exportIncludes(name string) (accepted []string, known bool) {
	switch name {
	case ExportCalls:
		return []string{IncludeParticipants, IncludeRecording, IncludeLifeCycle, IncludeRecordingToRedact, IncludeIntegratedResources}, true
	case ExportCallMetrics:
		return []string{IncludeLifeCycle}, true
	case ExportTeams, ExportUsers:
		return nil, true
	}
	return nil, false
}

// Validate checks r against the export rules (see problems) and returns a
// *ValidationError listing every problem, or nil. Export calls it before sending.
func (r ExportRequest) Validate() error {
	if p := r.problems(); p != nil {
		return &ValidationError{Operation: "export", Problems: p}
	}
	return nil
}

// problems checks the export rules of the spec: at least one resource, known names
// without repeats, include only where accepted, json or csv (csv only for users,
// teams and call_metrics), a date range for calls and call_metrics with start before
// end and a span of at most two years, delivery "" or email.
func (r ExportRequest) problems() []string {
	var p []string
	if len(r.Resources) == 0 {
		p = append(p, "resources: at least one is required")
	}
	seen := map[string]bool{}
	needRange, csvOK := false, true
	for i, res := range r.Resources {
		accepted, known := exportIncludes(res.Name)
		if !known {
			p = append(p, fmt.Sprintf("resources[%d] name %q: want calls, call_metrics, teams or users", i, res.Name))
			continue
		}
		if seen[res.Name] {
			p = append(p, fmt.Sprintf("resources[%d] name %q: listed twice", i, res.Name))
		}
		seen[res.Name] = true
		for _, inc := range res.Include {
			if !slices.Contains(accepted, inc) {
				p = append(p, fmt.Sprintf("resources[%d] include %q: not accepted for %s", i, inc, res.Name))
			}
		}
		needRange = needRange || res.Name == ExportCalls || res.Name == ExportCallMetrics
		csvOK = csvOK && res.Name != ExportCalls
	}
	switch r.OutputFormat {
	case FormatJSON:
	case FormatCSV:
		if !csvOK {
			p = append(p, "output_format csv: only users, teams and call_metrics can be exported as csv")
		}
	default:
		p = append(p, fmt.Sprintf("output_format %q: want json or csv", r.OutputFormat))
	}
	if r.DeliveryType != "" && r.DeliveryType != DeliveryEmail {
		p = append(p, fmt.Sprintf("delivery_type %q: want email or nothing", r.DeliveryType))
	}
	return append(p, r.rangeProblems(needRange)...)
}

func (r ExportRequest) rangeProblems(required bool) []string {
	d := r.DateRange
	if d == nil {
		if required {
			return []string{"date_range: required when exporting calls or call_metrics"}
		}
		return nil
	}
	// Compare what is sent: the dates go to the second.
	start, end := d.StartDate.Truncate(time.Second), d.EndDate.Truncate(time.Second)
	switch {
	case start.IsZero() || end.IsZero():
		return []string{"date_range: start_date and end_date are required"}
	case !start.Before(end):
		return []string{"date_range: start_date must be before end_date"}
	case end.After(start.AddDate(2, 0, 0)):
		return []string{"date_range: span must not exceed two years"}
	}
	return nil
}
