package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/callbus/callbus/events"
)

// feed prints events as readable lines: time, type, entity and the key change.
// It is safe for concurrent use.
type feed struct {
	mu sync.Mutex
	w  io.Writer
	// clock, when set (the demo's simulator), gives each line's time instead of
	// the event's own: the simulated time at which it was published, so that the
	// lines read in order although resources are polled at different intervals.
	clock func() time.Time
}

// header explains the demo's lines: the time column is simulated.
func (f *feed) header(speed float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.w, "# simulated call center: times are the simulator's clock, running %g× real time\n", speed)
	fmt.Fprintf(f.w, "%-8s  %-26s %-30s %s\n", "SIM TIME", "EVENT", "ENTITY", "CHANGE")
}

// print writes the line of the event body.
func (f *feed) print(body []byte) { f.printGap(body, "") }

// printGap writes the line of the event body, with gap (e.g. "+12s") after the
// time when it is not empty.
func (f *feed) printGap(body []byte, gap string) {
	var e events.Envelope
	line := ""
	if err := json.Unmarshal(body, &e); err != nil {
		line = fmt.Sprintf("(undecodable event: %v)", err)
	} else {
		at := e.Time
		if f.clock != nil {
			at = f.clock()
		}
		if gap != "" {
			gap = fmt.Sprintf("%-9s ", gap)
		}
		line = fmt.Sprintf("%s  %s%-26s %-30s %s", at.Format(time.TimeOnly), gap, e.Type, e.Subject, summary(body))
	}
	// The body is whatever the stream holds: a newline in a name would split the
	// line, an escape sequence would reach the terminal.
	line = strings.Map(printable, strings.ToValidUTF8(line, "\uFFFD"))
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintln(f.w, line)
}

// summary is the key change of an event in a few words ("" when its body is not
// a valid event of a known type).
func summary(body []byte) string {
	ev, err := events.Decode(body)
	if err != nil {
		return ""
	}
	switch e := ev.(type) {
	case *events.CallCreatedEvent:
		return callSummary(e.Data.Call)
	case *events.CallEndedEvent:
		c := e.Data.Call
		return fmt.Sprintf("%s, %d participants, billed %ds", callSummary(c), len(c.Participants), c.BillDuration)
	case *events.CallUpdatedEvent:
		return changes(e.Data.Changes)
	case *events.UserUpdatedEvent:
		return changes(e.Data.Changes)
	case *events.MetricUpdatedEvent:
		return changes(e.Data.Changes)
	case *events.ParticipantJoinedEvent:
		p := e.Data.Participant
		return fmt.Sprintf("%s %d (%s)", strings.ToLower(p.ParticipantType), p.ParticipantID, statusLabel(p.CallStatus))
	case *events.ParticipantStatusChangedEvent:
		p := e.Data.Participant
		return fmt.Sprintf("%s %d: %s → %s", strings.ToLower(p.ParticipantType), p.ParticipantID, e.Data.Previous.Label, e.Data.Current.Label)
	case *events.UserCreatedEvent:
		return fmt.Sprintf("%s (%s)", e.Data.User.Name, e.Data.User.Role)
	case *events.UserDeletedEvent:
		return fmt.Sprintf("%s (%s)", e.Data.User.Name, e.Data.User.Role)
	case *events.UserStatusChangedEvent:
		return fmt.Sprintf("%s: %s → %s", e.Data.User.Name, userState(e.Data.Previous), userState(e.Data.Current))
	case *events.TeamCreatedEvent:
		return teamSummary(e.Data)
	case *events.TeamUpdatedEvent:
		return teamSummary(e.Data)
	case *events.MetricFinalizedEvent:
		m := e.Data.Metric
		return fmt.Sprintf("talk %ds, hold %ds, ivr %ds, %d life-cycle steps", m.TalkTime, m.HoldDuration, m.IVRTime, len(m.LifeCycle))
	case *events.AccountWatermarkEvent:
		return watermarkSummary(e.Data)
	case *events.CallSnapshotEvent:
		return "resync: " + callSummary(e.Data.Call)
	case *events.UserSnapshotEvent:
		return fmt.Sprintf("resync: %s, %s", e.Data.User.Name, userState(e.Data.State))
	case *events.TeamSnapshotEvent:
		return fmt.Sprintf("resync: %s, %d members", e.Data.Team.Name, len(e.Data.Team.Users))
	}
	return ""
}

// watermarkSummary is the state and each resource's mark.
func watermarkSummary(d events.WatermarkData) string {
	parts := []string{string(d.State)}
	for _, r := range d.Resources {
		parts = append(parts, r.Resource+" ≤ "+r.Until.Format(time.TimeOnly))
	}
	return strings.Join(parts, ", ")
}

func callSummary(c events.Call) string {
	s := string(c.Direction)
	if c.AssignedCallQueueName != nil {
		s += " via " + *c.AssignedCallQueueName
	}
	return s
}

func changes(cs []events.Change) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s: %s → %s", c.Field, clip(c.Previous), clip(c.Current)))
	}
	return strings.Join(parts, "; ")
}

func teamSummary(d events.TeamData) string {
	s := fmt.Sprintf("%s, %d members", d.Team.Name, len(d.Team.Users))
	if len(d.MembersAdded)+len(d.MembersRemoved) > 0 {
		s += fmt.Sprintf(", added %v, removed %v", d.MembersAdded, d.MembersRemoved)
	}
	return s
}

func userState(s events.UserState) string {
	name := s.StatusName
	if s.PreferenceName != "" && s.PreferenceName != name {
		name += " (" + s.PreferenceName + ")"
	}
	return name
}

func statusLabel(code int) string { return events.CallStatusLabel(code) }

// clip shortens a JSON value to 40 characters, compacted first (a body need not be
// compact) and cut between characters, not inside one.
func clip(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	if r := []rune(b.String()); len(r) > 40 {
		return string(r[:37]) + "..."
	}
	return b.String()
}

// printable maps control characters to a space.
func printable(r rune) rune {
	if unicode.IsControl(r) {
		return ' '
	}
	return r
}
