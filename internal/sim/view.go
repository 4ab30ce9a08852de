package sim

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// view renders records for one response: absolute URLs from base and, when rng is
// set, the per-record drift of the field notes.
type view struct {
	w      *world
	base   string
	drift  float64
	offset float64
	rng    *rand.Rand // nil: canonical output (reports)
	// hostile serves Config.Hostile's hazards; nil: none (reports, or not set).
	hostile *hostile
	// reportPoison tells the calls a report serves poisoned (ReportFaults); nil:
	// none (list reads).
	reportPoison func(id int64) bool
}

// shape is how one record is drawn. Each drift variant is chosen independently with
// probability Config.Drift; the zone with probability Config.OffsetRate.
type shape struct {
	strIDs  bool           // ids as strings
	title   bool           // direction "Incoming"/"Outgoing"
	decimal bool           // connection_type as 1.0
	tsKey   bool           // life_cycle key "timestamp" instead of "time_stamp"
	early   bool           // the earlier call form (no name fields etc.)
	noMeta  bool           // list: paging meta left out
	loc     *time.Location // nil: UTC with Z
}

var offsetZones = []*time.Location{
	time.FixedZone("+0100", 3600), time.FixedZone("-0500", -5*3600), time.FixedZone("+0530", 5*3600+1800),
}

// rcView is the API view for a request.
// sendList answers a list whose response is a bare array (users, user statuses,
// teams): the page of items the request's paging asks for, in the configured order.
func sendList[T any](rc *reqCtx, items []T, write func(*view, *enc, T)) {
	pg, ok := rc.paging()
	if !ok {
		return
	}
	v := rc.view()
	var e enc
	e.arr()
	for _, i := range rc.indexes(len(items), pg) {
		write(v, &e, items[i])
	}
	e.end(']')
	rc.send(http.StatusOK, e.bytes())
}

func (rc *reqCtx) view() *view {
	return &view{w: rc.w, base: rc.base, drift: rc.s.cfg.Drift, offset: rc.s.cfg.OffsetRate, rng: rc.s.shapes, hostile: rc.s.hostile}
}

// shape draws the shape of the next record.
func (v *view) shape() shape {
	var sh shape
	if v.rng == nil {
		return sh
	}
	if v.drift > 0 {
		d := func() bool { return v.rng.Float64() < v.drift }
		sh.strIDs, sh.title, sh.decimal, sh.tsKey, sh.early, sh.noMeta = d(), d(), d(), d(), d(), d()
	}
	if v.offset > 0 && v.rng.Float64() < v.offset {
		sh.loc = offsetZones[v.rng.IntN(len(offsetZones))]
	}
	return sh
}

// id writes an id, as a string under drift.
func (e *enc) id(v int64, sh shape) {
	if sh.strIDs {
		e.str(strconv.FormatInt(v, 10))
		return
	}
	e.int(v)
}

// nid writes an id or null for 0.
func (e *enc) nid(v int64, sh shape) {
	if v == 0 {
		e.null()
		return
	}
	e.id(v, sh)
}

// dur writes a duration and its sibling name_unit.
func (e *enc) dur(name string, v int64) {
	e.key(name)
	e.int(v)
	e.key(name + "_unit")
	e.str("seconds")
}

// idRefs writes a list of references, objects holding only an id (a user's
// teams, a team's users).
func (e *enc) idRefs(ids []int64, sh shape) {
	e.arr()
	for _, id := range ids {
		e.obj()
		e.key("id")
		e.id(id, sh)
		e.end('}')
	}
	e.end(']')
}

// ndur writes a nullable duration and its unit.
func (e *enc) ndur(name string, v int64, null bool) {
	e.key(name)
	if null {
		e.null()
	} else {
		e.int(v)
	}
	e.key(name + "_unit")
	e.str("seconds")
}

// user writes a user object.
func (v *view) user(e *enc, u *user) {
	sh := v.shape()
	e.obj()
	e.key("id")
	e.id(u.id, sh)
	e.key("name")
	e.str(u.name)
	e.key("email")
	e.str(u.email)
	e.key("phone")
	e.strOrNull(u.phone)
	e.key("status")
	e.int(int64(u.status))
	e.key("preference")
	e.int(int64(u.pref))
	e.key("mobile_app_preference")
	e.int(int64(u.mobPref))
	e.key("last_call_time")
	e.time(u.lastCall, sh.loc)
	e.key("last_seen_time")
	if u == v.w.users[0] && v.hostile.poisonPerson(0) {
		e.str(poisonDate)
	} else {
		e.time(u.lastSeen, sh.loc)
	}
	e.key("confirmed")
	e.bool(u.confirmed)
	e.key("language")
	e.strOrNull(u.lang)
	e.key("time_zone")
	e.str(u.tz)
	e.key("deleted")
	e.bool(u.deleted)
	e.key("role")
	e.str(u.role)
	e.key("teams")
	e.idRefs(v.w.userTeams(u), sh)
	e.end('}')
}

// status writes a user status object.
func (v *view) status(e *enc, st userStatus) {
	sh := v.shape()
	e.obj()
	e.key("id")
	e.id(int64(st.id), sh)
	e.key("name")
	e.str(st.name)
	e.key("status_type")
	e.str(st.typ)
	e.key("status_sub_type")
	e.str(st.sub)
	e.key("emoji")
	e.str(st.emoji)
	e.key("enabled")
	e.int(int64(st.enabled))
	e.end('}')
}

// team writes a team object.
func (v *view) team(e *enc, t *team) {
	sh := v.shape()
	e.obj()
	e.key("id")
	e.id(t.id, sh)
	e.key("name")
	if t == v.w.teams[0] && v.hostile.poisonPerson(1) {
		e.raw(`{"bad":true}`)
	} else {
		e.str(t.name)
	}
	e.key("description")
	e.str(t.desc)
	e.key("users")
	e.idRefs(t.members, sh)
	e.key("omni_channel")
	e.bool(t.omni)
	e.end('}')
}
