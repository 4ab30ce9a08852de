package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/event"
	"github.com/nats-io/nats.go"
)

// t0 is when the crafted world starts.
var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// stream builds a crafted stream of account acme under prefix "callcenter", each
// message as the relay publishes it, one second after the one before.
type stream struct {
	t    *testing.T
	msgs []Message
}

// add appends an event of type typ about entity; key tells events of one entity
// apart (the diff's state key).
func (s *stream) add(typ events.Type, entity, key string, data any) {
	s.t.Helper()
	at := t0.Add(time.Duration(len(s.msgs)+1) * time.Second)
	e, err := event.New("acme", typ, entity, key, at, data)
	if err != nil {
		s.t.Fatal(err)
	}
	s.msgs = append(s.msgs, Message{
		Seq: uint64(len(s.msgs) + 1), Subject: events.Subject("callcenter", "acme", typ), Published: at, Event: e,
		Header: nats.Header{"Nats-Msg-Id": {e.ID}, "Content-Type": {events.ContentType}},
	})
}

func (s *stream) call(typ events.Type, id int64) {
	s.add(typ, fmt.Sprintf("calls/%d", id), string(typ), events.CallData{Call: events.Call{ID: id}})
}

func (s *stream) joined(call, id int64, status int) {
	s.add(events.ParticipantJoined, fmt.Sprintf("calls/%d/participants/%d", call, id), "joined",
		events.ParticipantData{CallID: call, Participant: events.Participant{ID: id, CallStatus: status}})
}

func (s *stream) status(call, id int64, from, to int) {
	s.add(events.ParticipantStatusChanged, fmt.Sprintf("calls/%d/participants/%d", call, id), fmt.Sprintf("%d-%d-%d", len(s.msgs), from, to),
		events.ParticipantStatusData{CallID: call, Participant: events.Participant{ID: id, CallStatus: to},
			Previous: events.CallStatus{Code: from}, Current: events.CallStatus{Code: to}})
}

func (s *stream) finalized(call int64) {
	s.add(events.MetricFinalized, fmt.Sprintf("calls/%d/metric", call), "finalized", events.MetricData{CallID: call})
}

func (s *stream) userCreated(id int64, status int) {
	s.add(events.UserCreated, fmt.Sprintf("users/%d", id), "created", events.UserData{User: events.User{ID: id, Status: status}})
}

func (s *stream) userStatus(id int64, from, to int) {
	s.add(events.UserStatusChanged, fmt.Sprintf("users/%d", id), fmt.Sprintf("%d-%d-%d", len(s.msgs), from, to), events.UserStatusData{
		User: events.User{ID: id, Status: to}, Previous: events.UserState{Status: from}, Current: events.UserState{Status: to}, Changed: []string{"status"},
	})
}

func (s *stream) teamCreated(id int64) {
	s.add(events.TeamCreated, fmt.Sprintf("teams/%d", id), "created", events.TeamData{Team: events.Team{ID: id}})
}

// cleanStream is what a correct poller publishes about cleanTruth: call 1 with
// participant 11 (13 → 8 → 1, missing the brief 6), ended and finalized; user 5
// (status 1 → 2 → 1, missing the brief 3); team 3.
func cleanStream(t *testing.T) *stream {
	s := &stream{t: t}
	s.teamCreated(3)
	s.userCreated(5, 1)
	s.call(events.CallCreated, 1)
	s.joined(1, 11, 13)
	s.status(1, 11, 13, 8)
	s.userStatus(5, 1, 2)
	s.status(1, 11, 8, 1)
	s.call(events.CallEnded, 1)
	s.finalized(1)
	s.userStatus(5, 2, 1)
	return s
}

// truthLog builds a ground-truth log, one line per call, one second apart.
type truthLog []string

func (l *truthLog) line(format string, args ...any) {
	at := t0.Add(time.Duration(len(*l)) * time.Second).Format(time.RFC3339)
	*l = append(*l, fmt.Sprintf(`{"time":%q,`, at)+fmt.Sprintf(format, args...)+"}")
}

func (l truthLog) String() string { return strings.Join(l, "\n") + "\n" }

// cleanTruthLog is the world cleanStream reports.
func cleanTruthLog() *truthLog {
	l := &truthLog{}
	l.line(`"entity":"team","id":3,"change":"created"`)
	l.line(`"entity":"call","id":1,"change":"created"`)
	l.line(`"entity":"participant","id":11,"call_id":1,"change":"joined","to":13`)
	l.line(`"entity":"user","id":5,"change":"status_changed","field":"status","from":1,"to":2`)
	l.line(`"entity":"participant","id":11,"call_id":1,"change":"status_changed","field":"call_status","from":13,"to":6`)
	l.line(`"entity":"participant","id":11,"call_id":1,"change":"status_changed","field":"call_status","from":6,"to":8`)
	l.line(`"entity":"participant","id":11,"call_id":1,"change":"status_changed","field":"duration","from":0,"to":30`)
	l.line(`"entity":"participant","id":11,"call_id":1,"change":"status_changed","field":"call_status","from":8,"to":1`)
	l.line(`"entity":"call","id":1,"change":"ended"`)
	l.line(`"entity":"metric","id":1,"call_id":1,"change":"finalized"`)
	l.line(`"entity":"user","id":5,"change":"status_changed","field":"status","from":2,"to":3`)
	l.line(`"entity":"user","id":5,"change":"status_changed","field":"status","from":3,"to":1`)
	return l
}

func readTruth(t *testing.T, l *truthLog) *Truth {
	t.Helper()
	tr, err := ReadTruth(strings.NewReader(l.String()))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// audit checks msgs and compares them with truth (nil: none).
func audit(msgs []Message, d Delivery, truth *Truth) *Report {
	r := CheckDelivery(msgs, "callcenter", d)
	if truth != nil {
		r.CompareTruth(truth)
	}
	return r
}
