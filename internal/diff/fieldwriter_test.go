package diff

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/callbus/callbus/events"
)

// optional is a field whose nil means "not sent" rather than "null".
func optional[T any](name string, p *T) field {
	if p == nil {
		return field{name: name}
	}
	return field{name, raw(*p), true}
}

// optionalSlice is a slice field whose nil means "not sent".
func optionalSlice[T any](name string, s []T) field {
	if s == nil {
		return field{name: name}
	}
	return field{name, raw(s), true}
}

// rawCallFields and rawMetricFields are the tracked fields as earlier releases
// made them, through raw (encoding/json): the reference of callFields and
// metricFields.
func rawCallFields(c events.Call) []field {
	var rec, transcription field
	if c.Recording != nil {
		r := *c.Recording
		transcription = optional("recording.transcription_url", r.TranscriptionURL)
		r.TranscriptionURL = nil
		rec = known("recording", r)
	} else {
		rec = known("recording", nil)
	}
	return []field{
		known("parent_call_id", c.ParentCallID),
		known("root_call_id", c.RootCallID),
		known("assigned_agent_id", c.AssignedAgentID),
		optional("assigned_agent_name", c.AssignedAgentName),
		known("assigned_team_id", c.AssignedTeamID),
		optional("assigned_team_name", c.AssignedTeamName),
		known("assigned_call_queue_id", c.AssignedCallQueueID),
		optional("assigned_call_queue_name", c.AssignedCallQueueName),
		known("assigned_ivr_id", c.AssignedIVRID),
		optional("assigned_ivr_name", c.AssignedIVRName),
		known("call_notes", c.CallNotes),
		known("bill_duration", c.BillDuration),
		rec,
		transcription,
		optional("recording_to_redact", c.RecordingToRedact),
		optionalSlice("integrated_resources", c.IntegratedResources),
		optionalSlice("parallel_call_groups", c.ParallelCallGroups),
	}
}

func rawMetricFields(m events.CallMetric) []field {
	return []field{
		known("ivr_time", m.IVRTime),
		known("hold_duration", m.HoldDuration),
		known("call_work_time", m.CallWorkTime),
		known("total_ringing_time", m.TotalRingingTime),
		known("talk_time", m.TalkTime),
		known("answering_speed", m.AnsweringSpeed),
		known("recording_duration", m.RecordingDuration),
		known("bill_duration", m.BillDuration),
		known("cost", m.Cost),
		known("csat", m.Csat),
		known("tags", m.Tags),
	}
}

// The known fields, in order, with their values: what compare takes.
func knownFields(fs []field) []field {
	return slices.DeleteFunc(slices.Clone(fs), func(f field) bool { return !f.known })
}

// callFields and metricFields give the fields raw gave, for calls and metrics
// with every field filled with odd values (see fill), and for the schema's.
func TestFieldWriterAsRaw(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		var c events.Call
		var m events.CallMetric
		fill(t, r, reflect.ValueOf(&c).Elem())
		fill(t, r, reflect.ValueOf(&m).Elem())
		if i == 0 {
			c, m = benchCall(), schemaMetrics()[0][0]
		}
		want, wantM := knownFields(rawCallFields(c)), rawMetricFields(m)
		if got := knownFields(callFields(c, nil, nil)); !slices.Equal(got, want) {
			t.Fatalf("call fields\n%+v\nraw gives\n%+v", got, want)
		}
		if got := metricFields(m, nil, nil); !slices.Equal(got, wantM) {
			t.Fatalf("metric fields\n%+v\nraw gives\n%+v", got, wantM)
		}
		// Against stored values, equal or not: the same fields.
		stored := map[string]string{"call_notes": `"x"`, "tags": "[]", "cost": "null"}
		for _, f := range append(want, wantM...) {
			if r.IntN(2) == 0 {
				stored[f.name] = f.value
			}
		}
		if got := knownFields(callFields(c, stored, nil)); !slices.Equal(got, want) {
			t.Fatalf("call fields against %v\n%+v\nraw gives\n%+v", stored, got, want)
		}
		if got := metricFields(m, stored, nil); !slices.Equal(got, wantM) {
			t.Fatalf("metric fields against %v\n%+v\nraw gives\n%+v", stored, got, wantM)
		}
	}
}

// formatDecimal as earlier releases wrote it: the reference of TestFormatDecimal.
func stringsFormatDecimal(digits int64, scale byte) string {
	neg := digits < 0
	s := strconv.FormatUint(uint64(max(digits, -digits)), 10)
	if len(s) <= int(scale) {
		s = strings.Repeat("0", int(scale)-len(s)+1) + s
	}
	s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	if neg {
		s = "-" + s
	}
	return s
}

func TestFormatDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		digits := r.Int64N(1<<uint(r.IntN(62)+1)) - r.Int64N(1<<uint(r.IntN(62)+1))
		if i < 4 {
			digits = []int64{0, 5, -5, math.MinInt64 + 1}[i]
		}
		scale := byte(r.IntN(22))
		if got, want := formatDecimal(digits, scale), stringsFormatDecimal(digits, scale); got != want {
			t.Fatalf("formatDecimal(%d, %d) = %q, want %q", digits, scale, got, want)
		}
	}
}
