package sim

import (
	"net/http"
	"strings"
)

// listUsers: GET /users → 200, array of users (deleted ones included).
func (s *Sim) listUsers(rc *reqCtx) { sendList(rc, rc.w.users, (*view).user) }

// getUser: GET /users/{user_id} → 200 user, 404.
func (s *Sim) getUser(rc *reqCtx) {
	id, ok := rc.pathID("user_id", "User")
	if !ok {
		return
	}
	u := rc.w.user(id)
	if u == nil {
		rc.notFound("User", id)
		return
	}
	rc.sendUser(http.StatusOK, u)
}

func (rc *reqCtx) sendUser(status int, u *user) {
	var e enc
	rc.view().user(&e, u)
	rc.send(status, e.bytes())
}

// createUser: POST /users {email, role, [name, phone, time_zone, language]} → 201,
// 403 for Supervisor/Agent keys, 422 for a missing/invalid/taken email or a bad role.
func (s *Sim) createUser(rc *reqCtx) {
	if !rc.requireAdmin("Creating users") {
		return
	}
	m, ok := rc.object()
	if !ok {
		return
	}
	f := &fields{m: m}
	email, hasEmail := f.str("email")
	role, hasRole := f.str("role")
	name, _ := f.str("name")
	phone, _ := f.str("phone")
	tz, _ := f.str("time_zone")
	lang, _ := f.str("language")
	switch {
	case f.hasErr("email"):
	case !hasEmail || strings.TrimSpace(email) == "":
		f.bad("email", "can't be blank")
	case !validEmail(email):
		f.bad("email", "is invalid")
	case rc.w.emailTaken(email, 0):
		f.bad("email", "has already been taken")
	}
	switch {
	case f.hasErr("role"):
	case !hasRole:
		f.bad("role", "can't be blank")
	case !validRole(role):
		f.bad("role", "is not included in the list (Account Admin, Admin, Supervisor, Agent)")
	}
	if len(f.errs) > 0 {
		rc.invalid(f.errs)
		return
	}
	rc.sendUser(http.StatusCreated, rc.w.createUser(email, role, name, phone, tz, lang))
}

// emailTaken reports whether another user (not except) has email, ignoring case.
func (w *world) emailTaken(email string, except int64) bool {
	for _, u := range w.users {
		if u.id != except && strings.EqualFold(u.email, email) {
			return true
		}
	}
	return false
}

// updateUser: PUT /users/{user_id} {email, role, preference, mobile_app_preference,
// deleted, [name, phone, time_zone, language]} → 200, 403, 404, 422. Every change
// enters the world: preference moves status, deleted stops routing and flips.
func (s *Sim) updateUser(rc *reqCtx) {
	if !rc.requireAdmin("Updating users") {
		return
	}
	id, ok := rc.pathID("user_id", "User")
	if !ok {
		return
	}
	w := rc.w
	u := w.user(id)
	if u == nil {
		rc.notFound("User", id)
		return
	}
	m, ok := rc.object()
	if !ok {
		return
	}
	f := &fields{m: m}
	up := readUserUpdate(f)
	up.check(w, f, u)
	if len(f.errs) > 0 {
		rc.invalid(f.errs)
		return
	}
	up.apply(w, f, u)
	rc.sendUser(http.StatusOK, u)
}

// userUpdate is the body of a user update; each has* says the field was given.
type userUpdate struct {
	email, role, name, phone, tz, lang                   string
	hasEmail, hasRole, hasName, hasPhone, hasTZ, hasLang bool
	pref, mob                                            int64
	hasPref, hasMob, del, hasDel                         bool
}

// readUserUpdate reads the update's fields from f, which records type errors.
func readUserUpdate(f *fields) userUpdate {
	var up userUpdate
	up.email, up.hasEmail = f.str("email")
	up.role, up.hasRole = f.str("role")
	up.pref, up.hasPref = f.int("preference")
	up.mob, up.hasMob = f.int("mobile_app_preference")
	up.del, up.hasDel = f.bool("deleted")
	up.name, up.hasName = f.str("name")
	up.phone, up.hasPhone = f.str("phone")
	up.tz, up.hasTZ = f.str("time_zone")
	up.lang, up.hasLang = f.str("language")
	return up
}

// check records in f the given values that are invalid for user u.
func (up *userUpdate) check(w *world, f *fields, u *user) {
	if up.hasEmail {
		switch {
		case !validEmail(up.email):
			f.bad("email", "is invalid")
		case w.emailTaken(up.email, u.id):
			f.bad("email", "has already been taken")
		}
	}
	if up.hasRole && !validRole(up.role) {
		f.bad("role", "is not included in the list (Account Admin, Admin, Supervisor, Agent)")
	}
	if up.hasPref {
		if st, ok := w.statusByID(int(up.pref)); !ok || st.typ == "busy" || st.typ == "acw" {
			f.bad("preference", "must be a valid user status id that is not busy or after call work")
		}
	}
	if up.hasMob {
		if _, ok := w.statusByID(int(up.mob)); !ok {
			f.bad("mobile_app_preference", "must be a valid user status id")
		}
	}
}

// apply makes the checked update in the world, writing a truth line per changed
// text field; the mobile preference, deletion and preference go through the
// world's own setters, in that order.
func (up *userUpdate) apply(w *world, f *fields, u *user) {
	set := func(field string, cur *string, v string, has bool) {
		if has && v != *cur {
			w.truth.write(w.now, entUser, u.id, 0, chUpdated, field, nullStr(*cur), nullStr(v))
			*cur = v
		}
	}
	set("email", &u.email, up.email, up.hasEmail)
	set("role", &u.role, up.role, up.hasRole)
	set("name", &u.name, up.name, up.hasName)
	set("phone", &u.phone, up.phone, up.hasPhone)
	set("time_zone", &u.tz, up.tz, up.hasTZ)
	set("language", &u.lang, up.lang, up.hasLang || f.has("language"))
	if up.hasMob {
		w.setMobilePref(u, int(up.mob))
	}
	if up.hasDel && up.del != u.deleted {
		w.setDeleted(u, up.del)
	}
	if up.hasPref {
		w.setPref(u, int(up.pref))
	}
}

// setDeleted marks u deleted (no more calls or random flips) or restores it.
func (w *world) setDeleted(u *user, del bool) {
	u.deleted = del
	u.flipGen++
	if del {
		w.truth.write(w.now, entUser, u.id, 0, chDeleted, "", none, none)
		return
	}
	w.truth.write(w.now, entUser, u.id, 0, chUpdated, "deleted", true, false)
	w.scheduleFlip(u)
	w.scheduleMobileFlip(u)
	w.offerWork(u)
}

// listStatuses: GET /user-statuses (or /user_statuses) → 200, array.
func (s *Sim) listStatuses(rc *reqCtx) { sendList(rc, rc.w.statuses, (*view).status) }
