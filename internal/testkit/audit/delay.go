package audit

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/callbus/callbus/events"
)

// Delays returns, per event type, the detection delay of each event the truth
// explains: the time the stream stored it minus the time the change it reports
// happened in the world. toReal maps a simulated time to wall-clock time (the
// identity for a simulator at speed 1 started now).
func Delays(msgs []Message, t *Truth, toReal func(time.Time) time.Time) map[events.Type][]time.Duration {
	out := map[events.Type][]time.Duration{}
	for _, m := range msgs {
		if m.DecodeErr != nil {
			continue
		}
		at, ok := t.changeTime(m, toReal)
		if !ok {
			continue
		}
		out[m.Event.Type] = append(out[m.Event.Type], m.Published.Sub(toReal(at)))
	}
	return out
}

// changeTime finds when the change an event reports happened: the latest matching
// truth change no later than the event's publication.
func (t *Truth) changeTime(m Message, toReal func(time.Time) time.Time) (time.Time, bool) {
	e := m.Event
	latest := func(key string, match func(change) bool) (time.Time, bool) {
		cs := t.changes[key]
		for i := len(cs) - 1; i >= 0; i-- {
			if match(cs[i]) && !toReal(cs[i].at).After(m.Published) {
				return cs[i].at, true
			}
		}
		return time.Time{}, false
	}
	any := func(change) bool { return true }
	switch e.Type {
	case events.CallCreated, events.CallEnded:
		var d events.CallData
		if json.Unmarshal(e.Data, &d) != nil {
			return time.Time{}, false
		}
		what := map[events.Type]string{events.CallCreated: "created", events.CallEnded: "ended"}[e.Type]
		return latest(changeKey("call", d.Call.ID, what), any)
	case events.MetricFinalized:
		var d events.MetricData
		if json.Unmarshal(e.Data, &d) != nil {
			return time.Time{}, false
		}
		return latest(changeKey("metric", d.CallID, "finalized"), any)
	case events.ParticipantStatusChanged:
		var d events.ParticipantStatusData
		if json.Unmarshal(e.Data, &d) != nil {
			return time.Time{}, false
		}
		return latest(changeKey("participant", d.Participant.ID, "call_status"), func(c change) bool { return c.to == d.Current.Code })
	case events.UserStatusChanged:
		var d events.UserStatusData
		if json.Unmarshal(e.Data, &d) != nil {
			return time.Time{}, false
		}
		cur := map[string]int{"status": d.Current.Status, "preference": d.Current.Preference, "mobile_app_preference": d.Current.MobileAppPreference}
		var best time.Time
		for _, f := range d.Changed {
			if at, ok := latest(changeKey("user", d.User.ID, f), func(c change) bool { return c.to == cur[f] }); ok && at.After(best) {
				best = at
			}
		}
		return best, !best.IsZero()
	}
	return time.Time{}, false
}

// Percentile returns the p-th percentile (0–100) of ds, nearest rank; 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
