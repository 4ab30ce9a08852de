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
	email, hasEmail := f.str("email")
	role, hasRole := f.str("role")
	pref, hasPref := f.int("preference")
	mob, hasMob := f.int("mobile_app_preference")
	del, hasDel := f.bool("deleted")
	name, hasName := f.str("name")
	phone, hasPhone := f.str("phone")
	tz, hasTZ := f.str("time_zone")
	lang, hasLang := f.str("language")
	if hasEmail {
		switch {
		case !validEmail(email):
			f.bad("email", "is invalid")
		case w.emailTaken(email, u.id):
			f.bad("email", "has already been taken")
		}
	}
	if hasRole && !validRole(role) {
		f.bad("role", "is not included in the list (Account Admin, Admin, Supervisor, Agent)")
	}
	if hasPref {
		if st, ok := w.statusByID(int(pref)); !ok || st.typ == "busy" || st.typ == "acw" {
			f.bad("preference", "must be a valid user status id that is not busy or after call work")
		}
	}
	if hasMob {
		if _, ok := w.statusByID(int(mob)); !ok {
			f.bad("mobile_app_preference", "must be a valid user status id")
		}
	}
	if len(f.errs) > 0 {
		rc.invalid(f.errs)
		return
	}
	set := func(field string, cur *string, v string, has bool) {
		if has && v != *cur {
			w.truth.write(w.now, entUser, u.id, 0, chUpdated, field, nullStr(*cur), nullStr(v))
			*cur = v
		}
	}
	set("email", &u.email, email, hasEmail)
	set("role", &u.role, role, hasRole)
	set("name", &u.name, name, hasName)
	set("phone", &u.phone, phone, hasPhone)
	set("time_zone", &u.tz, tz, hasTZ)
	set("language", &u.lang, lang, hasLang || f.has("language"))
	if hasMob {
		w.setMobilePref(u, int(mob))
	}
	if hasDel && del != u.deleted {
		w.setDeleted(u, del)
	}
	if hasPref {
		w.setPref(u, int(pref))
	}
	rc.sendUser(http.StatusOK, u)
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
