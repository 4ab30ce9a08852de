package sim

// userStatus is an entry of GET /user-statuses. Ids 0..3 are the defaults whose id
// equals the user status value they stand for; 4.. are custom.
type userStatus struct {
	id             int
	name, typ, sub string
	emoji          string
	enabled        int
}

// Status ids used by the world.
const (
	stOffline  = 0
	stOnline   = 1
	stBusy     = 2
	stACW      = 3
	stLunch    = 4
	stTraining = 5
	stMobile   = 6
	stMeeting  = 7
)

func defaultStatuses() []userStatus {
	return []userStatus{
		{stOffline, "Offline", "offline", "offline", "⚫", 1},
		{stOnline, "Online", "online", "online", "🟢", 1},
		{stBusy, "Busy", "busy", "busy", "📞", 1},
		{stACW, "After Call Work", "acw", "acw", "📝", 1},
		{stLunch, "Lunch", "offline", "offline", "🍔", 1},
		{stTraining, "Training", "offline", "offline", "🎓", 1},
		{stMobile, "Mobile", "online", "online_phone", "📱", 1},
		{stMeeting, "Meeting", "offline", "offline", "📅", 0},
	}
}

// statusByID returns the status with id.
func (w *world) statusByID(id int) (userStatus, bool) {
	if id < 0 || id >= len(w.statuses) {
		return userStatus{}, false
	}
	return w.statuses[id], true
}

// onlineType reports whether status id is of type online (the user takes calls).
func (w *world) onlineType(id int) bool {
	st, ok := w.statusByID(id)
	return ok && st.typ == "online"
}
