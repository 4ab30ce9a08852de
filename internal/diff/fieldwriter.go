package diff

import (
	"github.com/callbus/callbus/events"
)

// fieldWriter makes the tracked fields of a call or a metric, each value written
// by jsonWriter: the bytes raw gives (json.Marshal's, or null where it fails)
// without encoding/json's reflection, buffers and boxing (TestFieldWriterAsRaw).
// A value equal to the stored one is that string, and the new values are cut from
// one string made at the end (done): an unchanged record allocates no value, a
// new one a single string for all of them.
type fieldWriter struct {
	w      jsonWriter
	start  int // where the value being written starts in w.b
	fs     []field
	stored map[string]string
	sc     *scratch // where the room came from (nil: new room)
	// pending are the fields whose value is w.b[from:to], set by done.
	pending [maxTrackedFields]pendingValue
	npend   int
}

type pendingValue struct{ field, from, to int }

// maxTrackedFields bounds the fields of a record (a call has 17).
const maxTrackedFields = 24

// newFieldWriter writes the fields and their values into sc's room for them
// (see scratch), or new room when sc is nil.
func newFieldWriter(sc *scratch, stored map[string]string) fieldWriter {
	if sc == nil {
		return fieldWriter{w: jsonWriter{b: make([]byte, 0, 256)}, fs: make([]field, 0, maxTrackedFields), stored: stored}
	}
	return fieldWriter{w: jsonWriter{b: sc.vals[:0]}, fs: sc.fs[:0], stored: stored, sc: sc}
}

// add takes what was written since the last field as the value of name.
func (f *fieldWriter) add(name string) {
	v, cut := "null", false
	written := f.w.b[f.start:]
	if old, ok := f.stored[name]; ok && f.w.err == nil && old == string(written) {
		v = old
	} else if f.w.err == nil {
		switch string(written) { // the common empty values: constants
		case "null":
		case `""`:
			v = `""`
		case "[]":
			v = "[]"
		case "0":
			v = "0"
		default:
			cut = true
		}
	}
	if cut {
		f.pending[f.npend] = pendingValue{len(f.fs), f.start, len(f.w.b)}
		f.npend++
		f.start = len(f.w.b)
	} else {
		f.w.b = f.w.b[:f.start]
	}
	f.fs = append(f.fs, field{name, v, true})
	f.w.err = nil
}

// done gives the fields, their new values cut from one string (the buffer
// they were written in can then be written again).
func (f *fieldWriter) done() []field {
	if f.npend > 0 {
		all := string(f.w.b)
		for _, p := range f.pending[:f.npend] {
			f.fs[p.field].value = all[p.from:p.to]
		}
	}
	if f.sc != nil {
		f.sc.vals = f.w.b[:0] // grown maybe: kept for the next
	}
	return f.fs
}

// unknown adds a field the observation says nothing about.
func (f *fieldWriter) unknown(name string) { f.fs = append(f.fs, field{name: name}) }

func (f *fieldWriter) int(name string, v int64) {
	f.w.int(v)
	f.add(name)
}

func (f *fieldWriter) optInt(name string, p *int64) {
	f.w.optInt(p)
	f.add(name)
}

func (f *fieldWriter) str(name string, s string) {
	f.w.str(s)
	f.add(name)
}

// optionalStr is a string field whose nil means "not sent" rather than "null".
func (f *fieldWriter) optionalStr(name string, p *string) {
	if p == nil {
		f.unknown(name)
		return
	}
	f.str(name, *p)
}

// callFields are the tracked fields of a call for call.updated, in sc (see
// newFieldWriter); stored are the snapshot's values (may be nil).
func callFields(c events.Call, stored map[string]string, sc *scratch) []field {
	f := newFieldWriter(sc, stored)
	f.optInt("parent_call_id", c.ParentCallID)
	f.optInt("root_call_id", c.RootCallID)
	f.optInt("assigned_agent_id", c.AssignedAgentID)
	f.optionalStr("assigned_agent_name", c.AssignedAgentName)
	f.optInt("assigned_team_id", c.AssignedTeamID)
	f.optionalStr("assigned_team_name", c.AssignedTeamName)
	f.optInt("assigned_call_queue_id", c.AssignedCallQueueID)
	f.optionalStr("assigned_call_queue_name", c.AssignedCallQueueName)
	f.optInt("assigned_ivr_id", c.AssignedIVRID)
	f.optionalStr("assigned_ivr_name", c.AssignedIVRName)
	f.str("call_notes", c.CallNotes)
	f.int("bill_duration", c.BillDuration)
	if c.Recording != nil {
		r := *c.Recording
		r.TranscriptionURL = nil // tracked on its own: absent in the earlier form
		f.w.recording(&r)
		f.add("recording")
		f.optionalStr("recording.transcription_url", c.Recording.TranscriptionURL)
	} else {
		f.w.lit("null")
		f.add("recording")
	}
	if c.RecordingToRedact != nil {
		f.w.recordingToRedact(c.RecordingToRedact)
		f.add("recording_to_redact")
	} else {
		f.unknown("recording_to_redact")
	}
	if c.IntegratedResources != nil {
		f.w.integratedResources(c.IntegratedResources)
		f.add("integrated_resources")
	} else {
		f.unknown("integrated_resources")
	}
	if c.ParallelCallGroups != nil {
		f.w.rawList(c.ParallelCallGroups)
		f.add("parallel_call_groups")
	} else {
		f.unknown("parallel_call_groups")
	}
	return f.done()
}

// metricFields are the fields whose later change gives metric.updated, in sc
// (see newFieldWriter); stored are the snapshot's values (may be nil).
func metricFields(m events.CallMetric, stored map[string]string, sc *scratch) []field {
	f := newFieldWriter(sc, stored)
	f.int("ivr_time", m.IVRTime)
	f.int("hold_duration", m.HoldDuration)
	f.int("call_work_time", m.CallWorkTime)
	f.optInt("total_ringing_time", m.TotalRingingTime)
	f.int("talk_time", m.TalkTime)
	f.optInt("answering_speed", m.AnsweringSpeed)
	f.int("recording_duration", m.RecordingDuration)
	f.optInt("bill_duration", m.BillDuration)
	f.w.optFloat(m.Cost)
	f.add("cost")
	f.w.csat(m.Csat)
	f.add("csat")
	f.w.tags(m.Tags)
	f.add("tags")
	return f.done()
}
