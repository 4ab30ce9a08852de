package sim

import (
	"fmt"
	"slices"
)

// team is a team of agents; each generated team owns one queue and one number.
type team struct {
	id         int64
	name, desc string
	members    []int64 // user ids, in the order set
	omni       bool
}

func (t *team) has(uid int64) bool { return slices.Contains(t.members, uid) }

// queue is a call queue of a generated team's number.
type queue struct {
	id      int64
	name    string
	team    *team
	timeout int64      // seconds a caller may wait before queue_wait_timeout
	waiting []*callRun // FIFO of callers waiting for an agent
}

// ivr is an IVR menu in front of a queue.
type ivr struct {
	id   int64
	name string
}

// phoneNumber is a service number: inbound calls reach its queue, through its IVR
// when it has one.
type phoneNumber struct {
	id     int64
	number string
	ivr    *ivr
	queue  *queue
	record bool // the number records calls
}

var teamNames = []string{"Sales", "Support", "Billing", "Retention", "Onboarding", "Escalations", "Partners", "VIP"}

// genTeams creates n teams with a queue and a number each and spreads the agents
// and supervisors over them; about 30% belong to a second team.
func (w *world) genTeams(n int) {
	for i := range n {
		name := fmt.Sprintf("Team %d", i+1)
		if i < len(teamNames) {
			name = teamNames[i]
		}
		t := &team{id: int64(i + 1), name: name, desc: name + " line agents", omni: i%2 == 0}
		w.teams = append(w.teams, t)
		q := &queue{id: int64(101 + i), name: name + " Queue", team: t, timeout: w.between(90, 240)}
		w.queues = append(w.queues, q)
		num := &phoneNumber{id: int64(201 + i), number: fmt.Sprintf("+1800555%04d", 100+i), queue: q, record: w.chance(0.85)}
		if i%2 == 0 {
			v := &ivr{id: int64(301 + i), name: name + " Menu"}
			w.ivrs = append(w.ivrs, v)
			num.ivr = v
		}
		w.numbers = append(w.numbers, num)
	}
	j := 0
	for _, u := range w.users {
		if !takesCalls(u) {
			continue
		}
		t := w.teams[j%n]
		t.members = append(t.members, u.id)
		if n > 1 && w.chance(0.3) {
			o := w.teams[(j+1+w.pick(n-1))%n]
			o.members = append(o.members, u.id)
		}
		j++
	}
}

// createTeam adds a team through the API. Teams created this way have no queue.
func (w *world) createTeam(name, desc string, members []int64, omni bool) *team {
	t := &team{id: int64(len(w.teams) + 1), name: name, desc: desc, omni: omni}
	w.teams = append(w.teams, t)
	w.truth.write(w.now, entTeam, t.id, 0, chCreated, "", none, none)
	w.applyMembers(t, members, false)
	return t
}

// setMembers replaces t's members, writing the team's users change and, for every
// user who joined or left, that user's teams change. Users who joined are offered
// waiting calls.
func (w *world) setMembers(t *team, members []int64) { w.applyMembers(t, members, true) }

// applyMembers replaces t's members; writeTeam says whether the team's own users
// change is written (not for a team just created).
func (w *world) applyMembers(t *team, members []int64, writeTeam bool) {
	members = dedup(members)
	if slices.Equal(members, t.members) {
		return
	}
	before := map[int64][]int64{}
	touched := dedup(append(slices.Clone(t.members), members...))
	for _, id := range touched {
		if u := w.user(id); u != nil {
			before[id] = w.userTeams(u)
		}
	}
	old := t.members
	t.members = members
	if writeTeam {
		w.truth.write(w.now, entTeam, t.id, 0, chUpdated, "users", idList(old), idList(members))
	}
	for _, id := range touched {
		u := w.user(id)
		if u == nil {
			continue
		}
		if after := w.userTeams(u); !slices.Equal(before[id], after) {
			w.truth.write(w.now, entUser, u.id, 0, chUpdated, "teams", idList(before[id]), idList(after))
			w.offerWork(u)
		}
	}
}

// dedup drops repeated ids, keeping first occurrences in order.
func dedup(ids []int64) []int64 {
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// idList is ids for a truth line: never null.
func idList(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}
