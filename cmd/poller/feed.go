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

	"github.com/callbus/callbus/internal/callcenter"
	"github.com/callbus/callbus/internal/event"
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
	var e event.Envelope
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
		line = fmt.Sprintf("%s  %s%-26s %-30s %s", at.Format(time.TimeOnly), gap, e.Type, e.Subject, summary(e))
	}
	// The body is whatever the stream holds: a newline in a name would split the
	// line, an escape sequence would reach the terminal.
	line = strings.Map(printable, strings.ToValidUTF8(line, "\uFFFD"))
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintln(f.w, line)
}

// summary is the key change of an event in a few words.
func summary(e event.Envelope) string {
	switch e.Type {
	case event.CallCreated, event.CallEnded:
		var d event.CallData
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		c := d.Call
		s := string(c.Direction)
		if c.AssignedCallQueueName != nil {
			s += " via " + *c.AssignedCallQueueName
		}
		if e.Type == event.CallEnded {
			s = fmt.Sprintf("%s, %d participants, billed %ds", s, len(c.Participants), c.BillDuration)
		}
		return s
	case event.CallUpdated, event.UserUpdated, event.MetricUpdated:
		var d struct {
			Changes []event.Change `json:"changes"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		var parts []string
		for _, c := range d.Changes {
			parts = append(parts, fmt.Sprintf("%s: %s → %s", c.Field, clip(c.Previous), clip(c.Current)))
		}
		return strings.Join(parts, "; ")
	case event.ParticipantJoined:
		var d event.ParticipantData
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		p := d.Participant
		return fmt.Sprintf("%s %d (%s)", strings.ToLower(p.ParticipantType), p.ParticipantID, statusLabel(p.CallStatus))
	case event.ParticipantStatusChanged:
		var d event.ParticipantStatusData
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		return fmt.Sprintf("%s %d: %s → %s", strings.ToLower(d.Participant.ParticipantType), d.Participant.ParticipantID, d.Previous.Label, d.Current.Label)
	case event.UserCreated, event.UserDeleted:
		var d event.UserData
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		return fmt.Sprintf("%s (%s)", d.User.Name, d.User.Role)
	case event.UserStatusChanged:
		var d event.UserStatusData
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		return fmt.Sprintf("%s: %s → %s", d.User.Name, userState(d.Previous), userState(d.Current))
	case event.TeamCreated, event.TeamUpdated:
		var d event.TeamData
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		s := fmt.Sprintf("%s, %d members", d.Team.Name, len(d.Team.Users))
		if len(d.MembersAdded)+len(d.MembersRemoved) > 0 {
			s += fmt.Sprintf(", added %v, removed %v", d.MembersAdded, d.MembersRemoved)
		}
		return s
	case event.MetricFinalized:
		var d event.MetricData
		if json.Unmarshal(e.Data, &d) != nil {
			break
		}
		m := d.Metric
		return fmt.Sprintf("talk %ds, hold %ds, ivr %ds, %d life-cycle steps", m.TalkTime, m.HoldDuration, m.IVRTime, len(m.LifeCycle))
	}
	return ""
}

func userState(s event.UserState) string {
	name := s.StatusName
	if s.PreferenceName != "" && s.PreferenceName != name {
		name += " (" + s.PreferenceName + ")"
	}
	return name
}

func statusLabel(code int) string { return callcenter.CallStatusLabel(code) }

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
