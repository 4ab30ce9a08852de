package diff

import (
	"fmt"
	"strconv"

	"github.com/callbus/callbus/events"
)

// ApplyParticipant brings the call snapshot prev up to a participant event the
// stream announced (participant.joined or participant.status_changed carrying p):
// the participant's status and updated_time become p's, and the sequence moves on.
// It is how the poller rebuilds Redis from the stream after a rollback or loss: a
// participant event carries the participant, not the call, so diffing is not
// possible. A nil prev (the call's own events are gone from the stream) gives nil.
func ApplyParticipant(prev []byte, p events.Participant) ([]byte, error) {
	if prev == nil {
		return nil, nil
	}
	var s callSnap
	if err := decodeCallSnap(prev, &s); err != nil {
		return nil, fmt.Errorf("apply participant %d: decode call snapshot: %w", p.ID, err)
	}
	if s.P == nil {
		s.P = map[string]partSnap{}
	}
	key := strconv.FormatInt(p.ID, 10)
	old := s.P[key]
	old.S, old.U = p.CallStatus, max(old.U, ms(p.UpdatedTime))
	s.P[key] = old
	s.Seq++
	return encodeCallSnap(nil, &s, nil), nil
}
