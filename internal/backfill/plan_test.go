package backfill

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/internal/callcenter"
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

// recorder is a sink that keeps the ids it is handed, per pass.
type recorder struct{ got []string }

func (r *recorder) call(pos int64, c callcenter.Call) error {
	r.got = append(r.got, "c"+itoa(c.ID))
	return nil
}
func (r *recorder) metric(pos int64, m callcenter.CallMetric) error {
	r.got = append(r.got, "m"+itoa(m.CallID))
	return nil
}
func (r *recorder) user(pos int64, u callcenter.User) error {
	r.got = append(r.got, "u"+itoa(u.ID))
	return nil
}
func (r *recorder) team(pos int64, t callcenter.Team) error {
	r.got = append(r.got, "t"+itoa(t.ID))
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestReadPass: metrics come in the second pass whatever their place in the
// report; unknown keys and null arrays are skipped.
func TestReadPass(t *testing.T) {
	const doc = `{"call_metrics":[{"id":9,"call_id":1}],"extra":{"a":[1,2]},"calls":[{"id":1},{"id":2}],"users":null,"teams":[{"id":3}]}`
	for pass, want := range []string{"c1 c2 t3", "m1"} {
		r := &recorder{}
		if err := readPass(strings.NewReader(doc), pass, r); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(r.got, " "); got != want {
			t.Errorf("pass %d: got %q, want %q", pass, got, want)
		}
	}
	if err := readPass(strings.NewReader(`{"calls":[{"id":1},`), 0, &recorder{}); err == nil {
		t.Error("a truncated report read without error")
	}
}
