package backfill

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// twoYearSpans is spans as the releases before the ramp wrote it: plan
// planTwoYears must give exactly these, or their checkpoints' Span would point
// elsewhere.
func twoYearSpans(r Request) []span {
	from, until := r.Since.UTC().Truncate(time.Second), r.Until.UTC().Truncate(time.Second)
	var out []span
	for {
		end := from.AddDate(2, 0, 0).Add(-time.Second)
		if !end.Before(until) {
			if !from.Before(until) {
				from = until.Add(-time.Second)
			}
			return append(out, span{from, until})
		}
		out = append(out, span{from, end})
		from = end.Add(time.Second)
	}
}

func TestSpans(t *testing.T) {
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	day := func(s string) time.Time { return at(s + "T00:00:00Z") }
	for _, tc := range []struct {
		name         string
		since, until time.Time
		want         int // spans of the ramp; 0: not checked
	}{
		{"a second", day("2024-01-01"), day("2024-01-01").Add(time.Second), 1},
		{"a day", day("2024-01-01"), day("2024-01-02"), 1},
		{"shorter than a month", at("2024-01-01T10:20:30.5Z"), at("2024-01-29T23:59:59.9Z"), 1},
		{"a month to the second", day("2024-01-01"), day("2024-02-01").Add(-time.Second), 1},
		{"a month, midnight to midnight", day("2024-01-01"), day("2024-02-01"), 1},
		{"30 days of February", day("2023-02-01"), day("2023-03-03"), 1},
		{"a month and a week", day("2024-01-01"), day("2024-02-08").Add(-time.Second), 1},
		{"a month, a week and a second", day("2024-01-01"), day("2024-02-08"), 2},
		{"two months", day("2024-01-01"), day("2024-03-01"), 2},
		{"three months and a second", day("2024-01-01"), day("2024-04-01").Add(time.Second), 2},
		{"from the 31st", day("2023-01-31"), day("2024-06-30"), 5},
		{"from a leap day", day("2024-02-29"), day("2027-02-28"), 6},
		{"across leap days", day("2023-02-28"), day("2028-03-01"), 7},
		{"exactly two years", day("2022-01-01"), day("2024-01-01").Add(-time.Second), 5},
		{"three years", day("2021-03-01"), day("2024-03-01"), 6},
		{"three years to odd seconds", at("2021-03-01T07:13:59Z"), at("2024-03-01T11:59:17.25Z"), 6},
		{"31 months and a second", day("2020-01-01"), day("2022-08-01"), 5},
		{"55 months and a second", day("2020-01-01"), day("2024-08-01"), 7},
		{"five years", day("2019-03-01"), day("2024-03-01"), 7},
		{"ten years", at("2014-05-17T03:04:05Z"), at("2024-05-17T03:04:04Z"), 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Since: tc.since, Until: tc.until, Resources: []string{"calls", "call_metrics", "users", "teams"}}
			old := twoYearSpans(req)
			if got := req.spans(planTwoYears); !slices.Equal(got, old) {
				t.Errorf("plan 0: %v, want the two-year spans %v", got, old)
			}
			ramp := req.spans(planRamp)
			if tc.want != 0 && len(ramp) != tc.want {
				t.Errorf("ramp: %d spans %v, want %d", len(ramp), ramp, tc.want)
			}
			since := tc.since.Truncate(time.Second)
			if first := ramp[0]; first.to.After(since.AddDate(0, 1, 0).Add(-time.Second + tailMerge)) {
				t.Errorf("ramp: the first span %v to %v is longer than a month (and its tail)", first.from, first.to)
			}
			for plan, ss := range [][]span{old, ramp} {
				checkSpans(t, req, plan, ss)
			}
		})
	}
}

// checkSpans: ss cover [Since, Until] to the second, each span starting a second
// after the one before ends (the last may start on its last second when it
// would be a second alone), each one the export accepts, users and teams with
// the last only.
func checkSpans(t *testing.T, req Request, plan int, ss []span) {
	t.Helper()
	since, until := req.Since.UTC().Truncate(time.Second), req.Until.UTC().Truncate(time.Second)
	if !ss[0].from.Equal(since) || !ss[len(ss)-1].to.Equal(until) {
		t.Errorf("plan %d: %v covers %v to %v, want %v to %v", plan, ss, ss[0].from, ss[len(ss)-1].to, since, until)
	}
	for i, s := range ss {
		last := i == len(ss)-1
		if s.to.After(spanEnd(s.from)) {
			t.Errorf("plan %d span %d: %v to %v is longer than two years", plan, i, s.from, s.to)
		}
		if i > 0 {
			next := ss[i-1].to.Add(time.Second)
			overlap := last && s.from.Equal(ss[i-1].to) && s.to.Equal(next)
			if !s.from.Equal(next) && !overlap {
				t.Errorf("plan %d span %d starts at %v, after %v", plan, i, s.from, ss[i-1].to)
			}
		}
		er := req.exportRequest(s, last)
		if err := er.Validate(); err != nil {
			t.Errorf("plan %d span %d: %v", plan, i, err)
		}
		var names []string
		for _, res := range er.Resources {
			names = append(names, res.Name)
		}
		if slices.Contains(names, "users") != last || slices.Contains(names, "teams") != last {
			t.Errorf("plan %d span %d of %d exports %v", plan, i, len(ss), names)
		}
	}
}

// TestRampShape: the ramp's spans end 1, 3, 7, 15 and 31 months after Since,
// then every two years, and the last takes the rest.
func TestRampShape(t *testing.T) {
	since := time.Date(2016, 2, 1, 12, 0, 0, 0, time.UTC) // a 1st: months added one span at a time meet those added at once
	until := since.AddDate(10, 0, 0)
	ss := Request{Since: since, Until: until}.spans(planRamp)
	var want []time.Time
	for _, months := range []int{1, 3, 7, 15, 31, 55, 79, 103} {
		want = append(want, since.AddDate(0, months, 0).Add(-time.Second))
	}
	want = append(want, until)
	if len(ss) != len(want) {
		t.Fatalf("%d spans %v, want %d", len(ss), ss, len(want))
	}
	for i, s := range ss {
		if !s.to.Equal(want[i]) {
			t.Errorf("span %d ends %v, want %v", i, s.to, want[i])
		}
	}
}

func TestRequestCheck(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Since: now.Add(-time.Hour), Until: now, Resources: []string{"calls"}}, ""},
		{Request{Since: now, Until: now.Add(-time.Hour), Resources: []string{"calls"}}, "must be before"},
		{Request{Since: now.Add(-time.Hour), Until: now, Resources: []string{"agents"}}, `resource "agents"`},
		{Request{Since: now.Add(-time.Hour), Until: now, Resources: []string{"call_metrics"}}, "needs calls"},
	} {
		err := tc.req.Check()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: got %v, want %q", tc.req, err, tc.want)
		}
	}
}
