package poll

import (
	"hash/maphash"
	"reflect"
	"testing"
	"time"

	"github.com/callbus/callbus/events"
)

// TestFingerprintsCoverEveryField: a record differing from another in any one
// field (Raw aside) has another fingerprint, so a field added to events.User or
// events.Team fails here until the fingerprint writes it (else a change in it
// would be skipped as unchanged).
func TestFingerprintsCoverEveryField(t *testing.T) {
	seed := maphash.MakeSeed()
	lang := "fr"
	at := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	user := events.User{ID: 1, Name: "a", Email: "b", Phone: "c", Status: 1, Preference: 2, MobileAppPreference: 3,
		LastCallTime: &at, LastSeenTime: &at, Confirmed: true, Deleted: true, Language: &lang, TimeZone: "d", Role: "e",
		Teams: []events.TeamRef{{ID: 4}}}
	team := events.Team{ID: 1, Name: "a", Description: "b", Users: []events.UserRef{{ID: 2}}, OmniChannel: true}
	tests := []struct {
		name string
		rec  any
		fp   func(any) uint64
	}{
		{"user", &user, func(v any) uint64 { return fingerprintUser(seed, v.(*events.User)) }},
		{"team", &team, func(v any) uint64 { return fingerprintTeam(seed, v.(*events.Team)) }},
	}
	for _, tt := range tests {
		base := tt.fp(tt.rec)
		orig := reflect.ValueOf(tt.rec).Elem()
		for i := range orig.NumField() {
			f := orig.Type().Field(i)
			if f.Name == "Raw" {
				continue
			}
			cp := reflect.New(orig.Type())
			cp.Elem().Set(orig)
			cp.Elem().Field(i).Set(reflect.Zero(f.Type)) // every field of the base is set: zero differs
			if got := tt.fp(cp.Interface()); got == base {
				t.Errorf("%s: a %s differing in %s has the same fingerprint", tt.name, tt.name, f.Name)
			}
		}
	}
	later := at.Add(time.Second)
	moved := user
	moved.LastSeenTime = &later
	if fingerprintUser(seed, &moved) == fingerprintUser(seed, &user) {
		t.Error("user: another last_seen_time has the same fingerprint")
	}
}
