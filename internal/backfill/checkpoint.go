package backfill

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/callbus/callbus/internal/poll"
)

// Checkpoint is a backfill's progress, committed with the batches it covers
// (cursor poll.CursorBackfill). Records before Record of pass Pass of the report
// of span Span are committed; a restart reads on from there.
type Checkpoint struct {
	Since     time.Time `json:"since"`
	Until     time.Time `json:"until"`
	Resources []string  `json:"resources"`
	// Plan is how the request is split into spans (Request.spans): Span indexes
	// the spans of this plan. 0, the two-year spans, is that of the checkpoints
	// of earlier releases, which have no plan.
	Plan  int   `json:"plan,omitempty"`
	Span  int   `json:"span"`
	JobID int64 `json:"job_id,omitempty"`
	// Path is the report URL once the job completed, at Completed (it is valid
	// for 7 days from then).
	Path      string    `json:"path,omitempty"`
	Completed time.Time `json:"completed,omitzero"`
	// Size is the report's size once downloaded whole.
	Size   int64 `json:"size,omitempty"`
	Pass   int   `json:"pass"`
	Record int64 `json:"record"`
	// Records and Events count what was committed over the whole backfill; Jobs
	// and Downloads the export jobs started and report downloads begun.
	Records   int64     `json:"records"`
	Events    int64     `json:"events"`
	Jobs      int       `json:"jobs"`
	Downloads int       `json:"downloads"`
	Requests  int64     `json:"requests"` // API requests used
	Started   time.Time `json:"started"`
	// Failures counts the export jobs of the current span that failed, stalled
	// or served an unreadable report; LastFailure says how the last did.
	Failures    int    `json:"failures,omitempty"`
	LastFailure string `json:"last_failure,omitempty"`
	// HighWater is the state's high water before the backfill ("" for a fresh
	// state): where a backfill that gives up puts it back.
	HighWater string `json:"high_water,omitempty"`
}

// newCheckpoint starts req on a state whose high water is highWater.
func newCheckpoint(req Request, now time.Time, highWater string) Checkpoint {
	return Checkpoint{Since: req.Since.UTC(), Until: req.Until.UTC(), Resources: req.Resources, Plan: planLatest, Started: now,
		HighWater: highWater}
}

// same reports whether cp is the progress of req.
func (cp Checkpoint) same(req Request) bool {
	return cp.Since.Equal(req.Since) && cp.Until.Equal(req.Until) && slices.Equal(cp.Resources, req.Resources)
}

// newJob forgets the current job, its report and the position in it.
func (cp *Checkpoint) newJob() {
	cp.JobID, cp.Path, cp.Completed, cp.Size, cp.Pass, cp.Record = 0, "", time.Time{}, 0, 0, 0
}

// replan starts the request over, from its first span of the latest plan, when
// the checkpoint's plan is unknown (a later release's, after a downgrade): its
// Span means nothing here. What is committed stays, and records read again diff
// to nothing; the counts go on.
func (cp *Checkpoint) replan() {
	cp.Plan, cp.Span, cp.Failures, cp.LastFailure = planLatest, 0, 0, ""
	cp.newJob()
}

// cursors is the checkpoint as the cursors to commit.
func (cp Checkpoint) cursors() map[string]string {
	b, _ := json.Marshal(cp) // plain values: always marshals
	return map[string]string{poll.CursorBackfill: string(b)}
}

// readCheckpoint decodes the stored progress; ok is false when none is stored.
func readCheckpoint(cur map[string]string) (cp Checkpoint, ok bool, err error) {
	v := cur[poll.CursorBackfill]
	if v == "" {
		return cp, false, nil
	}
	if err := json.Unmarshal([]byte(v), &cp); err != nil {
		return cp, false, fmt.Errorf("backfill: stored progress: %w", err)
	}
	return cp, true, nil
}

// Pending returns the request of the backfill under way, if any, from the
// account's cursors.
func Pending(cur map[string]string) (Request, bool, error) {
	cp, ok, err := readCheckpoint(cur)
	if !ok || err != nil {
		return Request{}, false, err
	}
	return Request{Since: cp.Since, Until: cp.Until, Resources: cp.Resources}, true, nil
}

// Fresh reports whether the cursors are those of a state nothing was read into
// yet: no epoch (or only one), no backfill done or given up.
func Fresh(cur map[string]string) bool {
	return cur[poll.CursorBackfillDone] == "" && cur[poll.CursorHighWater] == "" && cur[poll.CursorBackfillIncomplete] == ""
}
