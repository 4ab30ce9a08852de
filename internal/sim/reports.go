package sim

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
)

// serveReport serves a completed job's report at /reports/{token}.json (one JSON
// object with an array per requested resource, keyed by resource name) or
// /reports/{token}.zip (a zip holding {resource}.csv per resource). No
// authentication: the URL is the credential, valid for seven simulated days after
// completion; otherwise 404. Calls and call metrics are those created within the
// job's date range, both ends inclusive, in ascending id order. For calls,
// participants, recording, recording_to_redact and integrated_resources are null
// unless included, and life_cycle (the call's metric events) appears only when
// included; for call metrics, life_cycle only when included.
func (s *Sim) serveReport(rw http.ResponseWriter, r *http.Request) {
	token, ext, _ := strings.Cut(r.PathValue("file"), ".")
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.syncLocked()
	var j *job
	for _, x := range w.jobs {
		if x.token == token {
			j = x
		}
	}
	if j == nil || j.status != jobCompleted || w.now > j.completedAt+reportTTL || ext != map[bool]string{false: "json", true: "zip"}[j.csv] {
		http.NotFound(rw, r)
		return
	}
	if j.csv {
		body, err := w.csvReport(j)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", "application/zip")
		_, _ = rw.Write(body)
		return
	}
	rw.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = rw.Write(w.jsonReport(j))
}

// jobCalls returns the calls within the job's date range.
func (w *world) jobCalls(j *job) []*call {
	if !j.hasRange {
		return w.calls
	}
	lo, hi := w.callRange(j.from, j.to+1)
	return w.calls[lo:hi]
}

// jsonReport renders the JSON report.
func (w *world) jsonReport(j *job) []byte {
	v := &view{w: w, base: j.base}
	var e enc
	e.obj()
	for _, res := range j.resources {
		e.key(res.name)
		e.arr()
		switch res.name {
		case "calls":
			parts := callParts{participants: res.includes("participants"), recording: res.includes("recording"),
				redact: res.includes("recording_to_redact"), integrated: res.includes("integrated_resources"),
				life: res.includes("life_cycle")}
			for _, c := range w.jobCalls(j) {
				v.call(&e, c, parts)
			}
		case "call_metrics":
			for _, c := range w.jobCalls(j) {
				v.metric(&e, c, res.includes("life_cycle"))
			}
		case "users":
			for _, u := range w.users {
				v.user(&e, u)
			}
		case "teams":
			for _, t := range w.teams {
				v.team(&e, t)
			}
		}
		e.end(']')
	}
	e.end('}')
	return e.bytes()
}

// csvReport renders the CSV report: a zip with one file per resource.
func (w *world) csvReport(j *job) ([]byte, error) {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, res := range j.resources {
		f, err := z.Create(res.name + ".csv")
		if err != nil {
			return nil, err
		}
		cw := csv.NewWriter(f)
		for _, rec := range w.csvRecords(j, res) {
			if err := cw.Write(rec); err != nil {
				return nil, err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return nil, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// csvRecords is one resource's CSV: a header row, then a row per record. Nested
// values (teams, users, tags, life_cycle) are JSON in their cell.
func (w *world) csvRecords(j *job, res exportResource) [][]string {
	v := &view{w: w, base: j.base}
	i := strconv.FormatInt
	t := func(s sec) string {
		if s == 0 {
			return ""
		}
		return s.Time().Format("2006-01-02T15:04:05Z07:00")
	}
	var rows [][]string
	switch res.name {
	case "users":
		rows = append(rows, []string{"id", "name", "email", "phone", "status", "preference", "mobile_app_preference",
			"last_call_time", "last_seen_time", "confirmed", "language", "time_zone", "deleted", "role", "teams"})
		for _, u := range w.users {
			rows = append(rows, []string{i(u.id, 10), u.name, u.email, u.phone, strconv.Itoa(u.status),
				strconv.Itoa(u.pref), strconv.Itoa(u.mobPref), t(u.lastCall), t(u.lastSeen),
				strconv.FormatBool(u.confirmed), u.lang, u.tz, strconv.FormatBool(u.deleted), u.role,
				idsJSON(w.userTeams(u))})
		}
	case "teams":
		rows = append(rows, []string{"id", "name", "description", "users", "omni_channel"})
		for _, tm := range w.teams {
			rows = append(rows, []string{i(tm.id, 10), tm.name, tm.desc, idsJSON(tm.members), strconv.FormatBool(tm.omni)})
		}
	case "call_metrics":
		life := res.includes("life_cycle")
		head := []string{"id", "call_id", "created_time", "updated_time", "ivr_time", "hold_duration",
			"call_work_time", "total_ringing_time", "talk_time", "answering_speed", "recording_duration",
			"bill_duration", "cost", "cost_unit", "csat_transfer_made", "csat_outcome", "csat_time", "tags"}
		if life {
			head = append(head, "life_cycle")
		}
		rows = append(rows, head)
		for _, c := range w.jobCalls(j) {
			m := &c.m
			n := func(x int64, null bool) string {
				if null {
					return ""
				}
				return i(x, 10)
			}
			cost := ""
			if !m.billNull {
				cost = strconv.FormatFloat(m.cost, 'f', -1, 64)
			}
			row := []string{i(m.id, 10), i(c.id, 10), t(m.created), t(m.updated), i(m.ivr, 10), i(m.hold, 10),
				i(m.work, 10), n(m.ring, m.ringNull), i(m.talk, 10), n(m.answer, m.answerNull), i(m.recDur, 10),
				n(m.bill, m.billNull), cost, costUnit, strconv.FormatBool(m.transfer), m.outcome,
				i(m.csatTime, 10), strings.Join(tagValue(m.tags), ";")}
			if life {
				var e enc
				v.lifeCycle(&e, c, shape{})
				row = append(row, string(e.bytes()))
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// idsJSON renders ids as a JSON array of numbers.
func idsJSON(ids []int64) string {
	b := []byte{'['}
	for k, id := range ids {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}
