package audit

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go"
)

func TestCleanStreamHasNoProblem(t *testing.T) {
	for _, d := range []Delivery{ExactlyOnce, AtLeastOnce} {
		r := audit(cleanStream(t).msgs, d, readTruth(t, cleanTruthLog()))
		if !r.OK() {
			t.Errorf("delivery %d: got problems\n%s", d, strings.Join(r.Problems, "\n"))
		}
		if r.Messages != 10 || r.ByType[events.ParticipantStatusChanged] != 2 || !slices.Equal(r.PartStatusSeq[11], []int{13, 8, 1}) {
			t.Errorf("delivery %d: got %d messages, %v, statuses %v", d, r.Messages, r.ByType, r.PartStatusSeq[11])
		}
	}
}

// Every problem the audit exists to catch, each in a stream (and truth) that is
// clean but for it. want lists a part of each problem expected, in order; truth
// false checks the stream alone.
func TestCheckCatches(t *testing.T) {
	cases := []struct {
		name     string
		edit     func(s *stream)
		world    func(l *truthLog)
		delivery Delivery
		want     []string
	}{
		{name: "wrong subject", edit: func(s *stream) { s.msgs[2].Subject = "callcenter.acme.call.ended" },
			want: []string{"seq 3: subject callcenter.acme.call.ended, want callcenter.acme.call.created"}},
		{name: "subject of another account", edit: func(s *stream) { s.msgs[0].Subject = "callcenter.globex.team.created" },
			want: []string{"seq 1: subject callcenter.globex.team.created"}},
		{name: "Nats-Msg-Id differs from id", edit: func(s *stream) { s.msgs[1].Header.Set("Nats-Msg-Id", "x") },
			want: []string{`seq 2: Nats-Msg-Id "x" differs from id`}},
		{name: "no Nats-Msg-Id", edit: func(s *stream) { s.msgs[1].Header.Del("Nats-Msg-Id") },
			want: []string{`seq 2: Nats-Msg-Id "" differs`}},
		{name: "wrong Content-Type", edit: func(s *stream) { s.msgs[4].Header.Set("Content-Type", "application/json") },
			want: []string{`seq 5: Content-Type "application/json"`}},
		{name: "repeated id", edit: func(s *stream) { s.msgs = append(s.msgs, again(s.msgs[4])) },
			want: []string{"seq 11: id ", "already published at seq 5 (participant.status_changed calls/1/participants/11)"}},
		{name: "published again after a withdrawal", edit: func(s *stream) { s.msgs[4] = withdrawnBefore(s.msgs[4]) }},
		{name: "repeated id under a message id of its own", edit: func(s *stream) { s.msgs = append(s.msgs, withdrawnBefore(again(s.msgs[4]))) },
			want: []string{"seq 11: id ", "already published at seq 5"}},
		{name: "repeated id, at least once", delivery: AtLeastOnce, edit: func(s *stream) { s.msgs = append(s.msgs, again(s.msgs[4])) },
			want: []string{"already published at seq 5"}},
		{name: "body not an event", edit: func(s *stream) { s.msgs[0].DecodeErr = errors.New("bad json") },
			want: []string{"seq 1: body is not an event: bad json"}},
		{name: "invalid envelope", edit: func(s *stream) { s.msgs[0].Event.SpecVersion = "0.3" },
			want: []string{`seq 1: event "`, `specversion "0.3"`}},
		{name: "data not of its type", edit: func(s *stream) { s.msgs[0].Event.Data = json.RawMessage(`{"team":[]}`) },
			want: []string{"seq 1: team.created teams/3: "}},
		{name: "broken participant chain", edit: func(s *stream) { s.msgs[6] = retype(t, s.msgs[6], `"previous":{"code":8,`, `"previous":{"code":13,`) },
			want: []string{"seq 7: participant.status_changed calls/1/participants/11: chain broken: previous 13, last published 8"}},
		{name: "current differs from call_status", edit: func(s *stream) { s.msgs[6] = retype(t, s.msgs[6], `"call_status":1`, `"call_status":2`) },
			want: []string{"current 1 differs from the participant's call_status 2"}},
		{name: "broken user chain", edit: func(s *stream) {
			s.msgs[9] = retype(t, s.msgs[9], `"previous":{"status":2,`, `"previous":{"status":7,`)
		},
			want: []string{"seq 10: user.status_changed users/5: chain broken: previous [7 0 0], last published [2 0 0]"}},
		{name: "missing call.created", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 2, 3) },
			want: []string{"participant joined before call.created", "call.ended calls/1: ended before created", "truth: call 1 created at 2026-11-21T10:00:01Z: 0 call.created published"}},
		{name: "call.created twice", edit: func(s *stream) {
			s.call(events.CallCreated, 1)
			s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1])
		},
			want: []string{"call 1: 2 call.created events, want 1", "truth: call 1 created at 2026-11-21T10:00:01Z: 2 call.created published"}},
		{name: "call.created twice, at least once", delivery: AtLeastOnce, edit: func(s *stream) {
			s.call(events.CallCreated, 1)
			s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1])
		}},
		{name: "missing call.ended", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 7, 8) },
			want: []string{"metric.finalized calls/1/metric: metric finalized before call.ended", "truth: call 1 ended at 2026-11-21T10:00:08Z: 0 call.ended published"}},
		{name: "call.ended twice", edit: func(s *stream) { s.call(events.CallEnded, 1); s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1]) },
			want: []string{"call 1: 2 call.ended events, want 1", "truth: call 1 ended at 2026-11-21T10:00:08Z: 2 call.ended published"}},
		{name: "invented call.ended", world: func(l *truthLog) { dropLine(l, `"change":"ended"`) },
			want: []string{"truth: call 1 has not ended, but call.ended was published"}},
		{name: "missing metric.finalized", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 8, 9) },
			want: []string{"truth: call 1 metric finalized at 2026-11-21T10:00:09Z: 0 metric.finalized published"}},
		{name: "metric.finalized twice", edit: func(s *stream) { s.finalized(1); s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1]) },
			want: []string{"call 1: 2 metric.finalized events, want 1", "truth: call 1 metric finalized at 2026-11-21T10:00:09Z: 2 metric.finalized published"}},
		{name: "participant changed before it joined", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 3, 4) },
			want: []string{"seq 5: participant.status_changed calls/1/participants/11: participant 11 changed before it joined"}},
		{name: "participant joined twice", edit: func(s *stream) { s.joined(1, 11, 1); s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1]) },
			want: []string{"participant 11 joined twice"}},
		{name: "participant joined again, at least once", delivery: AtLeastOnce, edit: func(s *stream) { s.joined(1, 11, 1); s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1]) }},
		{name: "participant with nothing published", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 3, 5); s.msgs = slices.Delete(s.msgs, 4, 5) },
			want: []string{"truth: participant 11 of call 1: nothing published"}},
		{name: "participant not at its final status", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 6, 7) },
			want: []string{"truth: participant 11 of call 1: published [13 8], real [13 6 8 1]"}},
		{name: "invented participant transition", edit: func(s *stream) {
			s.msgs = s.msgs[:6]
			s.status(1, 11, 8, 7)
			s.status(1, 11, 7, 1)
		}, want: []string{"truth: participant 11 of call 1: published [13 8 7 1], real [13 6 8 1]"}},
		{name: "participant statuses out of truth order", edit: func(s *stream) {
			s.msgs = s.msgs[:3]
			s.joined(1, 11, 8)
			s.status(1, 11, 8, 13)
			s.status(1, 11, 13, 1)
		}, want: []string{"truth: participant 11 of call 1: published [8 13 1], real [13 6 8 1]"}},
		{name: "user changed before user.created", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 1, 2) },
			want: []string{"seq 6: user.status_changed users/5: user 5 changed status before user.created"}},
		{name: "user.created twice", edit: func(s *stream) { s.userCreated(5, 1); s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1]) },
			want: []string{"user 5: 2 user.created events, want 1"}},
		{name: "team.created twice", edit: func(s *stream) { s.teamCreated(3); s.msgs[len(s.msgs)-1] = rekey(t, s.msgs[len(s.msgs)-1]) },
			want: []string{"team 3: 2 team.created events, want 1"}},
		{name: "user with nothing published", edit: func(s *stream) { s.msgs = slices.Delete(s.msgs, 1, 2); s.msgs = s.msgs[:4] },
			want: []string{"truth: user 5 changed status, nothing published"}},
		{name: "user not at its final status", edit: func(s *stream) { s.msgs = s.msgs[:9] },
			want: []string{"truth: user 5 status is 1, last published 2"}},
		// Participants of calls created before the truth began are not the truth's to judge.
		{name: "participant of a call the truth does not know", world: func(l *truthLog) {
			l.line(`"entity":"participant","id":21,"call_id":2,"change":"joined","to":1`)
		}},
		{name: "invented user transition", edit: func(s *stream) {
			s.msgs = s.msgs[:9]
			s.userStatus(5, 2, 4)
			s.userStatus(5, 4, 1)
		}, want: []string{"truth: user 5 status: published changes [2 4 1], real [2 3 1]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := cleanStream(t)
			if tc.edit != nil {
				tc.edit(s)
			}
			l := cleanTruthLog()
			if tc.world != nil {
				tc.world(l)
			}
			r := audit(s.msgs, tc.delivery, readTruth(t, l))
			got := strings.Join(r.Problems, "\n")
			if len(tc.want) == 0 && !r.OK() {
				t.Fatalf("got problems, want none:\n%s", got)
			}
			at := 0
			for _, w := range tc.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("problems lack %q (in order):\n%s", w, got)
				}
				at += i
			}
		})
	}
}

// retype replaces old with new in m's data (old must be there).
func retype(t *testing.T, m Message, old, new string) Message {
	t.Helper()
	if !strings.Contains(string(m.Event.Data), old) {
		t.Fatalf("no %s in %s", old, m.Event.Data)
	}
	m.Event.Data = json.RawMessage(strings.Replace(string(m.Event.Data), old, new, 1))
	return m
}

// again is m published once more, at the sequence after the crafted stream's.
func again(m Message) Message {
	m.Seq = 11
	return m
}

// withdrawnBefore gives m the Nats-Msg-Id the relay publishes an event under
// once it withdrew an earlier copy.
func withdrawnBefore(m Message) Message {
	m.Header = nats.Header{"Nats-Msg-Id": {event.MsgID(m.Event.ID, 1)}, "Content-Type": {events.ContentType}}
	return m
}

// rekey gives m a new id, as an event of a new epoch has.
func rekey(t *testing.T, m Message) Message {
	t.Helper()
	m.Event.ID = event.ID("acme", m.Event.Type, m.Event.Subject, "epoch-2")
	m.Header = nats.Header{"Nats-Msg-Id": {m.Event.ID}, "Content-Type": {events.ContentType}}
	return m
}

// dropLine removes the truth lines containing s.
func dropLine(l *truthLog, s string) {
	*l = slices.DeleteFunc(*l, func(line string) bool { return strings.Contains(line, s) })
}

// A repeated id is reported once and not applied again: the copy would otherwise
// break the participant's chain and count a status it never reached twice.
func TestRepeatedIDNotApplied(t *testing.T) {
	s := cleanStream(t)
	s.msgs = append(s.msgs, again(s.msgs[4]))
	r := Check(s.msgs, "callcenter")
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "already published at seq 5") {
		t.Errorf("problems %q, want only the repeated id", r.Problems)
	}
	if got := r.PartStatusSeq[11]; !slices.Equal(got, []int{13, 8, 1}) {
		t.Errorf("participant 11 statuses %v, want [13 8 1]", got)
	}
}

// Only the fields a user.status_changed changed are recorded as published changes:
// an unchanged field would look like an invented transition to CompareTruth.
func TestUserFieldSeqOnlyChangedFields(t *testing.T) {
	r := Check(cleanStream(t).msgs, "callcenter")
	want := map[string][]int{"5:status": {2, 1}}
	if !maps.EqualFunc(r.UserFieldSeq, want, slices.Equal) {
		t.Errorf("UserFieldSeq = %v, want %v", r.UserFieldSeq, want)
	}
}

func TestSubsequence(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []int
		want bool
	}{
		{"equal", []int{1, 2, 3}, []int{1, 2, 3}, true},
		{"states missed", []int{1, 3}, []int{1, 2, 3}, true},
		{"none published", nil, []int{1, 2}, true},
		{"last one invented", []int{1, 2, 4}, []int{1, 2, 3}, false},
		{"only one invented", []int{4}, []int{1, 2, 3}, false},
		{"out of order", []int{2, 1}, []int{1, 2}, false},
		{"repeats in the truth collapse", []int{1, 2}, []int{1, 1, 2, 2}, true},
		{"a repeat the truth holds as one state", []int{2, 2}, []int{1, 2, 2}, false},
	} {
		if got := subsequence(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: subsequence(%v, %v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
	}
}
