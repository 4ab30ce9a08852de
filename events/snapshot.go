package events

// Resync identifies the resync run (`poller resync`) that re-announced an entity:
// one run re-announces each entity it covers once, and its snapshots' ids are
// stable within the run (a run resumed after a leader change announces the same
// ids, which deduplicate) and distinct across runs.
type Resync struct {
	// Run is the run's id, chosen by the command that requested it.
	Run string `json:"run"`
}

// CallSnapshotData is the data of call.snapshot: the call as last announced
// (events before it in the stream carried the changes up to this state).
type CallSnapshotData struct {
	Call   Call   `json:"call"`
	Resync Resync `json:"resync"`
}

// UserSnapshotData is the data of user.snapshot: the user as last announced,
// with its status fields named as user.status_changed names them.
type UserSnapshotData struct {
	User   User      `json:"user"`
	State  UserState `json:"state"`
	Resync Resync    `json:"resync"`
}

// TeamSnapshotData is the data of team.snapshot: the team as last announced.
type TeamSnapshotData struct {
	Team   Team   `json:"team"`
	Resync Resync `json:"resync"`
}
