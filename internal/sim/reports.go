package sim

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// serveReport serves a completed job's report at /reports/{token}.json (one JSON
// object with an array per requested resource, keyed by resource name), at
// /reports/{token}.zip for a JSON report when Config.ZipReports is set (a zip
// holding report.json), or at /reports/{token}.zip for CSV (a zip holding
// {resource}.csv per resource). No authentication: the URL is the credential,
// valid for seven simulated days after completion; otherwise 404. Calls and call
// metrics are those created within the job's date range, both ends inclusive:
// history first (Config.History), then the rest, each in ascending created time.
// For calls, participants, recording, recording_to_redact and
// integrated_resources are null unless included, and life_cycle (the call's
// metric events) appears only when included; for call metrics, life_cycle only
// when included. JSON reports are streamed a chunk of records at a time, so their
// size is bounded by nothing but the history, and the API keeps answering while
// one is downloaded.
func (s *Sim) serveReport(rw http.ResponseWriter, r *http.Request) {
	token, ext, _ := strings.Cut(r.PathValue("file"), ".")
	s.mu.Lock()
	w := s.syncLocked()
	var j *job
	for _, x := range w.jobs {
		if x.token == token {
			j = x
		}
	}
	if j == nil || j.status != jobCompleted || w.now > j.completedAt+reportTTL || ext != j.reportExt() {
		s.mu.Unlock()
		http.NotFound(rw, r)
		return
	}
	if j.csv {
		body, err := w.csvReport(j)
		s.mu.Unlock()
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", "application/zip")
		_, _ = rw.Write(body)
		return
	}
	s.mu.Unlock()
	if !j.zipped {
		rw.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = s.streamReport(rw, j)
		return
	}
	rw.Header().Set("Content-Type", "application/zip")
	z := zip.NewWriter(rw)
	name := "report.json"
	if s.cfg.Reports.OddZip {
		name = "export/calls.json"
		err := oddEntries(z, j)
		if err != nil {
			return
		}
	}
	f, err := z.Create(name)
	if err == nil {
		err = s.streamReport(f, j)
	}
	if err == nil {
		_ = z.Close()
	}
}

// oddEntries writes what an archiver adds before the report
// (ReportFaults.OddZip): a manifest (JSON, with a count where a report holds
// an array) and a macOS resource fork named like the report.
func oddEntries(z *zip.Writer, j *job) error {
	f, err := z.Create("manifest.json")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, `{"job_id":%d,"files":["export/calls.json"],"calls":1}`, j.id); err != nil {
		return err
	}
	if f, err = z.Create("__MACOSX/export/._calls.json"); err != nil {
		return err
	}
	_, err = f.Write([]byte("\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        "))
	return err
}

// jobCalls returns the calls within the job's date range.
func (w *world) jobCalls(j *job) []*call {
	if !j.hasRange {
		return w.calls
	}
	lo, hi := w.callRange(j.from, j.to+1)
	return w.calls[lo:hi]
}

// reportChunk is how many records are rendered per hold of the Sim's lock.
const reportChunk = 1000

// streamReport writes the JSON report of j to out. It stops at the first write
// error (the client went away).
func (s *Sim) streamReport(out io.Writer, j *job) error {
	bw := bufio.NewWriterSize(out, 64<<10)
	_ = bw.WriteByte('{')
	for k, res := range j.resources {
		if k > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.Write(appendJSONString(nil, res.name))
		_, _ = bw.WriteString(":[")
		if err := s.streamResource(bw, j, res); err != nil {
			return err
		}
		_ = bw.WriteByte(']')
	}
	_ = bw.WriteByte('}')
	return bw.Flush()
}

// streamResource writes the records of one resource of j, without the brackets.
func (s *Sim) streamResource(out *bufio.Writer, j *job, res exportResource) error {
	parts := callParts{participants: res.includes("participants"), recording: res.includes("recording"),
		redact: res.includes("recording_to_redact"), integrated: res.includes("integrated_resources"),
		life: res.includes("life_cycle")}
	s.mu.Lock()
	w := s.syncLocked()
	v := &view{w: w, base: j.base, reportPoison: s.PoisonedInReports}
	var render func(e *enc, c *call)
	switch res.name {
	case "users", "teams":
		var e enc
		e.first = []bool{true}
		if res.name == "users" {
			for _, u := range w.users {
				v.user(&e, u)
			}
		} else {
			for _, t := range w.teams {
				v.team(&e, t)
			}
		}
		s.mu.Unlock()
		_, err := out.Write(e.b)
		return err
	case "calls":
		render = func(e *enc, c *call) {
			v.call(e, c, parts)
			if s.DuplicatedInReports(c.id) {
				v.call(e, olderCopy(c), parts)
			}
		}
	default:
		render = func(e *enc, c *call) { v.metric(e, c, res.includes("life_cycle")) }
	}
	lo, hi := int64(0), w.hist.n
	if j.hasRange {
		lo, hi = w.histRange(j.from, j.to)
	}
	live := w.jobCalls(j)
	s.mu.Unlock()
	n := hi - lo + int64(len(live))
	for at := int64(0); at < n; at += reportChunk {
		s.mu.Lock()
		e := enc{first: []bool{at == 0}}
		for k := at; k < min(at+reportChunk, n); k++ {
			if k < hi-lo {
				render(&e, w.histCall(lo+k))
			} else {
				render(&e, live[k-(hi-lo)])
			}
		}
		s.mu.Unlock()
		if _, err := out.Write(e.b); err != nil {
			return err
		}
	}
	return nil
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
