package audit

import (
	"strings"
	"testing"
)

// A participant the API stopped listing (Truth.Hide) is judged only on what was
// published of it: a prefix of its statuses, or nothing, is fine; an invented
// status is still a problem. One not hidden must reach its real final status.
func TestCompareTruthHiddenParticipants(t *testing.T) {
	truth := &Truth{
		Calls: map[int64]*TruthCall{1: {}},
		Participants: map[int64]*TruthParticipant{
			10: {CallID: 1, Statuses: []int{13, 8, 1}}, // hidden, published 13, 8
			11: {CallID: 1, Statuses: []int{13, 8, 1}}, // hidden, nothing published
			12: {CallID: 1, Statuses: []int{13, 8, 1}}, // hidden, published an invented 6
			13: {CallID: 1, Statuses: []int{13, 8, 1}}, // listed, published 13, 8 only
		},
	}
	truth.Hide(10, 11, 12)
	r := &Report{PartStatusSeq: map[int64][]int{10: {13, 8}, 12: {13, 6}, 13: {13, 8}}}
	r.compareParticipants(truth)
	got := strings.Join(r.Problems, "\n")
	if len(r.Problems) != 2 || !strings.Contains(got, "participant 12 ") || !strings.Contains(got, "participant 13 ") {
		t.Errorf("problems:\n%s\nwant one about the invented status of 12, one about 13 not ending", got)
	}
}
