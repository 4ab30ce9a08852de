package sim

import "slices"

// engage marks u as on callID (status 2).
func (w *world) engage(u *user, callID int64) {
	u.busyCall = callID
	w.touchSeen(u)
	w.refreshStatus(u)
}

// release frees u from callID and, on the next step, offers u waiting calls.
func (w *world) release(u *user, callID int64) {
	if u.busyCall == callID {
		u.busyCall = 0
	}
	w.touchSeen(u)
	w.refreshStatus(u)
	w.after(0, func() { w.offerWork(u) })
}

// offerWork dispatches the queues of every team u belongs to, if u can take a call.
func (w *world) offerWork(u *user) {
	if !w.routable(u) {
		return
	}
	for _, q := range w.queues {
		if q.team.has(u.id) {
			w.dispatch(q)
		}
	}
}

// dispatch rings a free team member for each waiting caller, oldest caller first.
func (w *world) dispatch(q *queue) {
	for i := 0; i < len(q.waiting); {
		r := q.waiting[i]
		u := w.idlest(q.team.members, r.tried, RoleAgent, RoleSupervisor)
		if u == nil {
			i++
			continue
		}
		q.waiting = slices.Delete(q.waiting, i, i+1)
		w.ring(r, u, w.primaryConn())
		w.planRing(r)
	}
}

// unqueue removes r from its queue's waiting list.
func (w *world) unqueue(r *callRun) {
	if r.q == nil {
		return
	}
	if i := slices.Index(r.q.waiting, r); i >= 0 {
		r.q.waiting = slices.Delete(r.q.waiting, i, i+1)
	}
}

// idlest returns the routable user among ids (nil ids: every user) with one of
// roles, not in exclude, who has been idle longest; ties go to the lowest id.
func (w *world) idlest(ids, exclude []int64, roles ...string) *user {
	var best *user
	consider := func(u *user) {
		if u == nil || !w.routable(u) || slices.Contains(exclude, u.id) || !slices.Contains(roles, u.role) {
			return
		}
		if best == nil || u.lastCall < best.lastCall || (u.lastCall == best.lastCall && u.id < best.id) {
			best = u
		}
	}
	if ids == nil {
		for _, u := range w.users {
			consider(u)
		}
		return best
	}
	for _, id := range ids {
		consider(w.user(id))
	}
	return best
}

// primaryConn is the connection type of an agent taking a call: 1, or now and then
// 7 (answered on an external number).
func (w *world) primaryConn() int8 {
	if w.chance(0.03) {
		return connExternal
	}
	return connPrimary
}
