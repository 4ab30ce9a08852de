package sim

import (
	"fmt"
	"strings"
)

// user is an agent (any role) of the account.
type user struct {
	id                    int64
	name, email, phone    string
	role, lang, tz        string // lang "" is null
	status, pref, mobPref int
	lastCall, lastSeen    sec // 0 is null
	confirmed, deleted    bool

	busyCall int64 // the call the user rings on or talks in: status 2
	acw      int   // after-call work in progress (count): status 3
	reserved bool  // held by a script: never routed
	flipGen  int   // bumping it cancels the scheduled random flips
}

var (
	firstNames = []string{"Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas",
		"Kira", "Liam", "Maya", "Noah", "Olga", "Pavel", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wei", "Yara", "Zoe"}
	lastNames = []string{"Adams", "Brown", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Haddad", "Ito", "Jensen",
		"Kowalski", "Lopez", "Moreau", "Nakamura", "Okafor", "Patel", "Rossi", "Schmidt", "Tanaka", "Weber"}
	timeZones = []string{"Eastern Time (US & Canada)", "Central Time (US & Canada)", "Pacific Time (US & Canada)",
		"London", "Berlin", "Chennai", "Sydney"}
	languages = []string{"en", "es", "fr", "de", "pt", ""} // "" is null
)

// genUsers creates n users: user 1 is the account admin, then about 5% Admins and
// 10% Supervisors, the rest Agents.
func (w *world) genUsers(n int) {
	admins, sups := 0, 0
	if n >= 3 {
		admins = max(1, n/20)
	}
	if n >= 4 {
		sups = max(1, n/10)
	}
	for i := 1; i <= n; i++ {
		role := RoleAgent
		switch {
		case i == 1:
			role = RoleAccountAdmin
		case i <= 1+admins:
			role = RoleAdmin
		case i <= 1+admins+sups:
			role = RoleSupervisor
		}
		w.genUser(role)
	}
}

// genUser adds one generated user with role, without a truth line (the world's
// initial state).
func (w *world) genUser(role string) *user {
	id := int64(len(w.users) + 1)
	first := firstNames[w.pick(len(firstNames))]
	last := lastNames[w.pick(len(lastNames))]
	u := &user{
		id:        id,
		name:      first + " " + last,
		email:     fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(first), strings.ToLower(last), id),
		phone:     fmt.Sprintf("+1415555%04d", id%10000),
		role:      role,
		lang:      languages[w.pick(len(languages))],
		tz:        timeZones[w.pick(len(timeZones))],
		confirmed: w.chance(0.9),
		lastSeen:  w.now - sec(w.between(0, 3600)),
		lastCall:  w.now - sec(w.between(600, 86400)),
		pref:      stOnline,
	}
	switch r := w.rng.Float64(); {
	case r < 0.1:
		u.pref = stMobile
	case r < 0.2:
		u.pref = stOffline
	case r < 0.25:
		u.pref = stLunch
	case r < 0.3:
		u.pref = stTraining
	}
	if w.chance(0.3) {
		u.mobPref = stMobile
	}
	u.status = w.effectiveStatus(u)
	w.users = append(w.users, u)
	return u
}

// createUser adds a user through the API: offline, unconfirmed, never seen. It
// writes a created line and enters the world's status flips.
func (w *world) createUser(email, role, name, phone, tz, lang string) *user {
	id := int64(len(w.users) + 1)
	if name == "" {
		name = strings.SplitN(email, "@", 2)[0]
	}
	if tz == "" {
		tz = timeZones[0]
	}
	u := &user{id: id, name: name, email: email, phone: phone, role: role, tz: tz, lang: lang,
		pref: stOffline, mobPref: stOffline}
	w.users = append(w.users, u)
	w.truth.write(w.now, entUser, id, 0, chCreated, "", none, none)
	w.scheduleFlip(u)
	w.scheduleMobileFlip(u)
	return u
}

// effectiveStatus is the user status value the spec prescribes: 2 while on a call,
// 3 during after-call work, else the preference's type (0 offline, 1 online).
func (w *world) effectiveStatus(u *user) int {
	switch {
	case u.busyCall != 0:
		return stBusy
	case u.acw > 0:
		return stACW
	case w.onlineType(u.pref):
		return stOnline
	}
	return stOffline
}

// refreshStatus recomputes u.status, writing a status_changed line when it moves.
func (w *world) refreshStatus(u *user) {
	if s := w.effectiveStatus(u); s != u.status {
		w.truth.write(w.now, entUser, u.id, 0, chStatusChanged, "status", u.status, s)
		u.status = s
	}
}

// touchSeen sets last_seen_time to now.
func (w *world) touchSeen(u *user) {
	if u.lastSeen != w.now {
		w.truth.write(w.now, entUser, u.id, 0, chUpdated, "last_seen_time", u.lastSeen, w.now)
		u.lastSeen = w.now
	}
}

// setPref changes the browser preference; status follows, and a user who comes
// online is offered waiting calls.
func (w *world) setPref(u *user, p int) {
	if p == u.pref {
		return
	}
	w.truth.write(w.now, entUser, u.id, 0, chStatusChanged, "preference", u.pref, p)
	u.pref = p
	w.touchSeen(u)
	w.refreshStatus(u)
	w.offerWork(u)
}

// setMobilePref changes mobile_app_preference.
func (w *world) setMobilePref(u *user, p int) {
	if p == u.mobPref {
		return
	}
	w.truth.write(w.now, entUser, u.id, 0, chStatusChanged, "mobile_app_preference", u.mobPref, p)
	u.mobPref = p
}

// takesCalls reports whether the user's role answers calls at all.
func takesCalls(u *user) bool { return u.role == RoleAgent || u.role == RoleSupervisor }

// routable reports whether u can be offered a call now.
func (w *world) routable(u *user) bool {
	return !u.deleted && !u.reserved && takesCalls(u) && u.busyCall == 0 && u.acw == 0 && w.onlineType(u.pref)
}

// scheduleFlip schedules u's next random preference change: online users take a
// break after 40 minutes on average, offline ones come back after 12.
func (w *world) scheduleFlip(u *user) {
	gen := u.flipGen
	mean := 12 * 60.0
	if w.onlineType(u.pref) {
		mean = 40 * 60
	}
	w.after(w.expSec(mean, 30), func() {
		if u.flipGen != gen || u.deleted {
			return
		}
		w.setPref(u, w.nextPref(u.pref))
		w.scheduleFlip(u)
	})
}

// nextPref draws the preference after p.
func (w *world) nextPref(p int) int {
	if w.onlineType(p) {
		switch r := w.rng.Float64(); {
		case r < 0.4:
			return stOffline
		case r < 0.8:
			return stLunch
		default:
			return stTraining
		}
	}
	if w.chance(0.85) {
		return stOnline
	}
	return stMobile
}

// scheduleMobileFlip toggles mobile_app_preference every three hours on average.
func (w *world) scheduleMobileFlip(u *user) {
	gen := u.flipGen
	w.after(w.expSec(3*3600, 60), func() {
		if u.flipGen != gen || u.deleted {
			return
		}
		p := stMobile
		if u.mobPref == stMobile {
			p = stOffline
		}
		w.setMobilePref(u, p)
		w.scheduleMobileFlip(u)
	})
}

// userTeams returns the ids of the teams u belongs to, by team id.
func (w *world) userTeams(u *user) []int64 {
	var ids []int64
	for _, t := range w.teams {
		if t.has(u.id) {
			ids = append(ids, t.id)
		}
	}
	return ids
}
