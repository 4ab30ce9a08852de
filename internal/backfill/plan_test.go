package backfill

import (
	"strings"
	"testing"
	"time"
)

func TestSpans(t *testing.T) {
	day := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	for _, tc := range []struct {
		name         string
		since, until time.Time
		want         int
	}{
		{"a month", day("2024-01-01"), day("2024-02-01"), 1},
		{"exactly two years", day("2022-01-01"), day("2024-01-01").Add(-time.Second), 1},
		{"two years and a second", day("2022-01-01"), day("2024-01-01"), 2},
		{"five years", day("2019-03-01"), day("2024-03-01"), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := Request{Since: tc.since, Until: tc.until}.spans()
			if len(ss) != tc.want || !ss[0].from.Equal(tc.since) || !ss[len(ss)-1].to.Equal(tc.until) {
				t.Fatalf("got %d spans %v, want %d from %v to %v", len(ss), ss, tc.want, tc.since, tc.until)
			}
			for i, s := range ss {
				if s.to.After(spanEnd(s.from)) {
					t.Errorf("span %d: %v to %v is longer than two years", i, s.from, s.to)
				}
				if i > 0 && s.from.After(ss[i-1].to.Add(time.Second)) {
					t.Errorf("span %d starts at %v, after %v", i, s.from, ss[i-1].to)
				}
				if err := (Request{Resources: []string{"calls"}}).exportRequest(s, true).Validate(); err != nil {
					t.Errorf("span %d: %v", i, err)
				}
			}
		})
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
