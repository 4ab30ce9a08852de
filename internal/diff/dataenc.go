package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/callbus/callbus/events"
)

// The parts of a transition (see transition in digest.go), in digest order.
const (
	partPrevious = iota
	partCurrent
	partChanges
	partMembersAdded
	partMembersRemoved
	transitionParts
)

// spans locates the transition's parts in the writer's buffer: the start and
// end offsets of each part's value, {0, 0} when the data has none.
type spans [transitionParts][2]int

// eventData writes the data of an event, as json.Marshal(data) writes it, and
// where in it the transition's parts lie: its digest (digest.go) without reading the
// data again. data is a pointer to one of the events package's data types.
func (w *jsonWriter) eventData(data any) (sp spans, err error) {
	switch d := data.(type) {
	case *events.CallData:
		w.lit(`{"call":`)
		w.call(&d.Call)
	case *events.CallUpdatedData:
		w.lit(`{"call":`)
		w.call(&d.Call)
		w.lit(`,"changes":`)
		sp.part(w, partChanges, func() { w.changes(d.Changes) })
	case *events.ParticipantData:
		w.lit(`{"call_id":`)
		w.int(d.CallID)
		w.lit(`,"participant":`)
		w.participant(&d.Participant)
	case *events.ParticipantStatusData:
		w.lit(`{"call_id":`)
		w.int(d.CallID)
		w.lit(`,"participant":`)
		w.participant(&d.Participant)
		w.lit(`,"previous":`)
		sp.part(w, partPrevious, func() { w.callStatus(d.Previous) })
		w.lit(`,"current":`)
		sp.part(w, partCurrent, func() { w.callStatus(d.Current) })
	case *events.UserData:
		w.lit(`{"user":`)
		w.user(&d.User)
		if len(d.Changes) > 0 {
			w.lit(`,"changes":`)
			sp.part(w, partChanges, func() { w.changes(d.Changes) })
		}
	case *events.UserStatusData:
		w.lit(`{"user":`)
		w.user(&d.User)
		w.lit(`,"previous":`)
		sp.part(w, partPrevious, func() { w.userState(&d.Previous) })
		w.lit(`,"current":`)
		sp.part(w, partCurrent, func() { w.userState(&d.Current) })
		w.lit(`,"changed":`)
		w.strs(d.Changed)
	case *events.TeamData:
		w.lit(`{"team":`)
		w.team(&d.Team)
		if len(d.MembersAdded) > 0 {
			w.lit(`,"members_added":`)
			sp.part(w, partMembersAdded, func() { w.ints(d.MembersAdded) })
		}
		if len(d.MembersRemoved) > 0 {
			w.lit(`,"members_removed":`)
			sp.part(w, partMembersRemoved, func() { w.ints(d.MembersRemoved) })
		}
		if len(d.Changes) > 0 {
			w.lit(`,"changes":`)
			sp.part(w, partChanges, func() { w.changes(d.Changes) })
		}
	case *events.MetricData:
		w.lit(`{"call_id":`)
		w.int(d.CallID)
		w.lit(`,"metric":`)
		w.metric(&d.Metric)
		if len(d.Changes) > 0 {
			w.lit(`,"changes":`)
			sp.part(w, partChanges, func() { w.changes(d.Changes) })
		}
	default:
		return spans{}, fmt.Errorf("no JSON writer for the data of this event")
	}
	w.b = append(w.b, '}')
	return sp, w.err
}

// part records where the value write writes lies.
func (sp *spans) part(w *jsonWriter, i int, write func()) {
	start := len(w.b)
	write()
	sp[i] = [2]int{start, len(w.b)}
}

// appendDigest appends the transition digest of data to b, its parts located by sp;
// it appends nothing for data without a transition.
func (sp *spans) appendDigest(b, data []byte) []byte {
	if *sp == (spans{}) {
		return b
	}
	var buf [512]byte
	parts := buf[:0]
	for _, p := range sp {
		parts = append(parts, data[p[0]:p[1]]...)
		parts = append(parts, 0)
	}
	sum := sha256.Sum256(parts)
	return hex.AppendEncode(b, sum[:digestSize])
}

func (w *jsonWriter) changes(cs []events.Change) {
	list(w, cs, func(w *jsonWriter, c events.Change) {
		w.lit(`{"field":`)
		w.str(c.Field)
		w.lit(`,"previous":`)
		w.raw(c.Previous)
		w.lit(`,"current":`)
		w.raw(c.Current)
		w.b = append(w.b, '}')
	})
}

func (w *jsonWriter) callStatus(s events.CallStatus) {
	w.lit(`{"code":`)
	w.int(int64(s.Code))
	w.lit(`,"label":`)
	w.str(s.Label)
	w.b = append(w.b, '}')
}

func (w *jsonWriter) userState(s *events.UserState) {
	w.lit(`{"status":`)
	w.int(int64(s.Status))
	w.lit(`,"status_name":`)
	w.str(s.StatusName)
	w.lit(`,"preference":`)
	w.int(int64(s.Preference))
	w.lit(`,"preference_name":`)
	w.str(s.PreferenceName)
	w.lit(`,"mobile_app_preference":`)
	w.int(int64(s.MobileAppPreference))
	w.lit(`,"mobile_app_preference_name":`)
	w.str(s.MobileAppPreferenceName)
	w.b = append(w.b, '}')
}

// list writes vs as a JSON array (null when nil, as encoding/json writes a nil
// slice), each element by each.
func list[T any](w *jsonWriter, vs []T, each func(*jsonWriter, T)) {
	if vs == nil {
		w.lit("null")
		return
	}
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		each(w, v)
	}
	w.b = append(w.b, ']')
}

func (w *jsonWriter) strs(ss []string) { list(w, ss, (*jsonWriter).str) }

func (w *jsonWriter) ints(vs []int64) { list(w, vs, (*jsonWriter).int) }
