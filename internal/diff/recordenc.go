package diff

import (
	"encoding/json"

	"github.com/callbus/callbus/events"
)

// The records of the events package as encoding/json writes them: fields in
// declaration order under their tag names, Raw (`json:"-"`) left out. A field
// added to a record must be added here too; TestDataEncodingAsEncodingJSON fills
// every field of every record by reflection and fails until it is.

func (w *jsonWriter) call(c *events.Call) {
	w.lit(`{"id":`)
	w.int(c.ID)
	w.lit(`,"direction":`)
	w.str(string(c.Direction))
	w.lit(`,"parent_call_id":`)
	w.optInt(c.ParentCallID)
	w.lit(`,"root_call_id":`)
	w.optInt(c.RootCallID)
	w.lit(`,"phone_number_id":`)
	w.int(c.PhoneNumberID)
	w.lit(`,"phone_number":`)
	w.str(c.PhoneNumber)
	w.lit(`,"assigned_agent_id":`)
	w.optInt(c.AssignedAgentID)
	w.lit(`,"assigned_agent_name":`)
	w.optStr(c.AssignedAgentName)
	w.lit(`,"assigned_team_id":`)
	w.optInt(c.AssignedTeamID)
	w.lit(`,"assigned_team_name":`)
	w.optStr(c.AssignedTeamName)
	w.lit(`,"assigned_call_queue_id":`)
	w.optInt(c.AssignedCallQueueID)
	w.lit(`,"assigned_call_queue_name":`)
	w.optStr(c.AssignedCallQueueName)
	w.lit(`,"assigned_ivr_id":`)
	w.optInt(c.AssignedIVRID)
	w.lit(`,"assigned_ivr_name":`)
	w.optStr(c.AssignedIVRName)
	w.lit(`,"call_notes":`)
	w.str(c.CallNotes)
	w.lit(`,"bill_duration":`)
	w.int(c.BillDuration)
	w.lit(`,"bill_duration_unit":`)
	w.str(c.BillDurationUnit)
	w.lit(`,"created_time":`)
	w.time(c.CreatedTime)
	w.lit(`,"updated_time":`)
	w.time(c.UpdatedTime)
	w.lit(`,"recording":`)
	if c.Recording == nil {
		w.lit("null")
	} else {
		w.recording(c.Recording)
	}
	w.lit(`,"recording_to_redact":`)
	if c.RecordingToRedact == nil {
		w.lit("null")
	} else {
		w.recordingToRedact(c.RecordingToRedact)
	}
	w.lit(`,"integrated_resources":`)
	w.integratedResources(c.IntegratedResources)
	w.lit(`,"participants":`)
	if c.Participants == nil {
		w.lit("null")
	} else {
		w.b = append(w.b, '[')
		for i := range c.Participants {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.participant(&c.Participants[i])
		}
		w.b = append(w.b, ']')
	}
	w.lit(`,"parallel_call_groups":`)
	w.rawList(c.ParallelCallGroups)
	w.b = append(w.b, '}')
}

func (w *jsonWriter) recording(r *events.Recording) {
	w.lit(`{"id":`)
	w.int(r.ID)
	w.lit(`,"url":`)
	w.str(r.URL)
	w.lit(`,"transcription_url":`)
	w.optStr(r.TranscriptionURL)
	w.lit(`,"duration":`)
	w.int(r.Duration)
	w.lit(`,"duration_unit":`)
	w.str(r.DurationUnit)
	w.b = append(w.b, '}')
}

func (w *jsonWriter) recordingToRedact(r *events.RecordingToRedact) {
	w.lit(`{"id":`)
	w.int(r.ID)
	w.lit(`,"url":`)
	w.str(r.URL)
	w.lit(`,"duration":`)
	w.int(r.Duration)
	w.lit(`,"duration_unit":`)
	w.str(r.DurationUnit)
	w.b = append(w.b, '}')
}

func (w *jsonWriter) integratedResources(rs []events.IntegratedResource) {
	list(w, rs, func(w *jsonWriter, r events.IntegratedResource) {
		w.lit(`{"id":`)
		w.int(r.ID)
		w.lit(`,"integration_name":`)
		w.str(r.IntegrationName)
		w.lit(`,"type":`)
		w.str(r.Type)
		w.b = append(w.b, '}')
	})
}

// rawList writes a list of raw JSON values.
func (w *jsonWriter) rawList(vs []json.RawMessage) {
	list(w, vs, func(w *jsonWriter, v json.RawMessage) { w.raw(v) })
}

func (w *jsonWriter) participant(p *events.Participant) {
	w.lit(`{"id":`)
	w.int(p.ID)
	w.lit(`,"call_id":`)
	w.int(p.CallID)
	w.lit(`,"caller_id":`)
	w.optInt(p.CallerID)
	w.lit(`,"caller_number":`)
	w.optStr(p.CallerNumber)
	w.lit(`,"caller_name":`)
	w.optStr(p.CallerName)
	w.lit(`,"participant_id":`)
	w.int(p.ParticipantID)
	w.lit(`,"participant_type":`)
	w.str(p.ParticipantType)
	w.lit(`,"connection_type":`)
	w.int(int64(p.ConnectionType))
	w.lit(`,"call_status":`)
	w.int(int64(p.CallStatus))
	w.lit(`,"duration":`)
	w.int(p.Duration)
	w.lit(`,"duration_unit":`)
	w.str(p.DurationUnit)
	w.lit(`,"enqueued_time":`)
	w.optTime(p.EnqueuedTime)
	w.lit(`,"cost":`)
	w.optFloat(p.Cost)
	w.lit(`,"cost_unit":`)
	w.str(p.CostUnit)
	w.lit(`,"created_time":`)
	w.time(p.CreatedTime)
	w.lit(`,"updated_time":`)
	w.time(p.UpdatedTime)
	w.b = append(w.b, '}')
}

func (w *jsonWriter) user(u *events.User) {
	w.lit(`{"id":`)
	w.int(u.ID)
	w.lit(`,"name":`)
	w.str(u.Name)
	w.lit(`,"email":`)
	w.str(u.Email)
	w.lit(`,"phone":`)
	w.str(u.Phone)
	w.lit(`,"status":`)
	w.int(int64(u.Status))
	w.lit(`,"preference":`)
	w.int(int64(u.Preference))
	w.lit(`,"mobile_app_preference":`)
	w.int(int64(u.MobileAppPreference))
	w.lit(`,"last_call_time":`)
	w.optTime(u.LastCallTime)
	w.lit(`,"last_seen_time":`)
	w.optTime(u.LastSeenTime)
	w.lit(`,"confirmed":`)
	w.bool(u.Confirmed)
	w.lit(`,"language":`)
	w.optStr(u.Language)
	w.lit(`,"time_zone":`)
	w.str(u.TimeZone)
	w.lit(`,"deleted":`)
	w.bool(u.Deleted)
	w.lit(`,"role":`)
	w.str(u.Role)
	w.lit(`,"teams":`)
	if u.Teams == nil {
		w.lit("null")
	} else {
		w.b = append(w.b, '[')
		for i, t := range u.Teams {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.lit(`{"id":`)
			w.int(t.ID)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, '}')
}

func (w *jsonWriter) team(t *events.Team) {
	w.lit(`{"id":`)
	w.int(t.ID)
	w.lit(`,"name":`)
	w.str(t.Name)
	w.lit(`,"description":`)
	w.str(t.Description)
	w.lit(`,"users":`)
	if t.Users == nil {
		w.lit("null")
	} else {
		w.b = append(w.b, '[')
		for i, u := range t.Users {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.lit(`{"id":`)
			w.int(u.ID)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	w.lit(`,"omni_channel":`)
	w.bool(t.OmniChannel)
	w.b = append(w.b, '}')
}
