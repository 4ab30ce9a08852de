package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// job is an export job.
type job struct {
	id               int64
	created, updated sec
	status           string
	token            string
	csv              bool
	zipped           bool // a JSON report served zipped (Config.ZipReports)
	resources        []exportResource
	from, to         sec // date range, inclusive; set when hasRange
	hasRange         bool
	base             string
	completedAt      sec
}

// exportResource is one resource of an export request.
type exportResource struct {
	name    string
	include []string
}

func (r exportResource) includes(part string) bool { return slices.Contains(r.include, part) }

// Job statuses.
const (
	jobStarted    = "started"
	jobZipping    = "zip_in_progress"
	jobCompleted  = "completed"
	reportTTL     = 7 * 24 * 3600 // seconds a report URL stays valid
	maxExportSpan = 2             // years
)

var exportIncludes = map[string][]string{
	"calls":        {"participants", "recording", "life_cycle", "recording_to_redact", "integrated_resources"},
	"call_metrics": {"life_cycle"},
	"teams":        nil,
	"users":        nil,
}

// export: POST /account/export → 202 {id, status: "started", message}; 403 for
// Supervisor and Agent keys; 400 for malformed JSON; 422 listing every rule broken:
// resources missing or empty, an unknown resource name, include on users/teams or
// with an unknown value, output_format not json/csv, csv with calls, date_range
// missing (calls, call_metrics) or unparsable or start after end or longer than two
// years, delivery_type other than email.
func (s *Sim) export(rc *reqCtx) {
	if !rc.admin() {
		rc.forbidden("Exporting account data")
		return
	}
	m, ok := rc.object()
	if !ok {
		return
	}
	j, errs := parseExport(m)
	if len(errs) > 0 {
		rc.invalid(errs)
		return
	}
	w := rc.w
	j.id = int64(len(w.jobs) + 1)
	j.created, j.updated, j.status, j.base = w.now, w.now, jobStarted, rc.base
	j.zipped = !j.csv && s.cfg.ZipReports
	j.token = fmt.Sprintf("%d-%016x", j.id, rc.s.shapes.Uint64())
	w.jobs = append(w.jobs, j)
	w.truth.write(w.now, entJob, j.id, 0, chCreated, "", none, none)
	// Job timings come from the shapes source so exports leave the world's own
	// random sequence alone.
	sh := rc.s.shapes
	w.runJob(j, s.cfg.jobOutcome(j.id, sh.Float64()), 2+sh.Int64N(9), 5+sh.Int64N(26))
	var e enc
	e.obj()
	e.key("id")
	e.int(j.id)
	e.key("status")
	e.str(jobStarted)
	e.key("message")
	e.str(fmt.Sprintf("Export job created. Check its status at %s/api/v1/jobs/%d", rc.base, j.id))
	e.end('}')
	rc.send(http.StatusAccepted, e.bytes())
}

// parseExport validates an export request body.
func parseExport(m map[string]json.RawMessage) (*job, []fieldError) {
	j := &job{}
	f := &fields{m: m}
	var res []struct {
		Name    *string          `json:"name"`
		Include *json.RawMessage `json:"include"`
	}
	if raw, ok := m["resources"]; !ok || string(raw) == "null" {
		f.bad("resources", "can't be blank")
	} else if err := json.Unmarshal(raw, &res); err != nil {
		f.bad("resources", "must be an array of objects with a name")
	} else if len(res) == 0 {
		f.bad("resources", "can't be blank")
	}
	needRange := false
	for i, r := range res {
		field := fmt.Sprintf("resources[%d]", i)
		allowed, known := exportIncludes[deref(r.Name)]
		if !known {
			f.bad(field+".name", "must be one of calls, call_metrics, teams, users")
			continue
		}
		er := exportResource{name: *r.Name}
		needRange = needRange || er.name == "calls" || er.name == "call_metrics"
		if r.Include != nil && string(*r.Include) != "null" {
			if err := json.Unmarshal(*r.Include, &er.include); err != nil {
				f.bad(field+".include", "must be an array of strings")
			} else if len(er.include) > 0 && allowed == nil {
				f.bad(field+".include", "is only valid for calls and call_metrics")
			} else {
				for _, inc := range er.include {
					if !slices.Contains(allowed, inc) {
						f.bad(field+".include", fmt.Sprintf("%q is not valid for %s", inc, er.name))
					}
				}
			}
		}
		j.resources = append(j.resources, er)
	}
	parseOutputFormat(f, j)
	if dt, ok := f.str("delivery_type"); ok && dt != "email" {
		f.bad("delivery_type", "must be email")
	}
	parseRange(f, j, needRange)
	return j, f.errs
}

// parseOutputFormat sets j.csv from output_format, which is required; calls
// cannot be exported as CSV, so it checks j.resources, already parsed.
func parseOutputFormat(f *fields, j *job) {
	switch format, _ := f.str("output_format"); format {
	case "json":
	case "csv":
		j.csv = true
		for _, r := range j.resources {
			if r.name == "calls" {
				f.bad("output_format", "csv is only available for users, teams and call_metrics")
				break
			}
		}
	case "":
		if !f.hasErr("output_format") {
			f.bad("output_format", "can't be blank")
		}
	default:
		f.bad("output_format", "must be json or csv")
	}
}

// parseRange validates date_range into j.
func parseRange(f *fields, j *job, required bool) {
	raw, ok := f.m["date_range"]
	if !ok || string(raw) == "null" {
		if required {
			f.bad("date_range", "can't be blank when exporting calls or call_metrics")
		}
		return
	}
	var dr struct {
		Start *string `json:"start_date"`
		End   *string `json:"end_date"`
	}
	if err := json.Unmarshal(raw, &dr); err != nil {
		f.bad("date_range", "must be an object with start_date and end_date")
		return
	}
	start, err1 := parseTime(deref(dr.Start))
	end, err2 := parseTime(deref(dr.End))
	if err1 != nil {
		f.bad("date_range.start_date", "is not a valid date-time")
	}
	if err2 != nil {
		f.bad("date_range.end_date", "is not a valid date-time")
	}
	if err1 != nil || err2 != nil {
		return
	}
	switch {
	case end.Before(start):
		f.bad("date_range", "start_date must be before end_date")
	case end.After(start.AddDate(maxExportSpan, 0, 0)):
		f.bad("date_range", "must not exceed two years")
	}
	j.from, j.to, j.hasRange = toSec(start), toSec(end), true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// runJob schedules the job's progress: zip_in_progress zip seconds after creation,
// completed (or failed) done seconds later, unless the job stalls.
func (w *world) runJob(j *job, outcome JobOutcome, zip, done int64) {
	w.after(zip, func() {
		w.setJobStatus(j, jobZipping)
		if outcome == JobStalls {
			return
		}
		w.after(done, func() {
			if outcome == JobFails {
				w.setJobStatus(j, jobFailed)
				return
			}
			j.completedAt = w.now
			w.setJobStatus(j, jobCompleted)
		})
	})
}

func (w *world) setJobStatus(j *job, st string) {
	w.truth.write(w.now, entJob, j.id, 0, chStatusChanged, "status", j.status, st)
	j.status, j.updated = st, w.now
}

// reportPath is the URL of a completed job's report.
func (j *job) reportPath() string {
	return fmt.Sprintf("%s/reports/%s.%s", j.base, j.token, j.reportExt())
}

// reportExt is the extension of the job's report: zip for CSV and zipped JSON.
func (j *job) reportExt() string {
	if j.csv || j.zipped {
		return "zip"
	}
	return "json"
}

// getJob: GET /jobs/{job_id} → 200 {bulk_job}, 404.
func (s *Sim) getJob(rc *reqCtx) {
	id, ok := rc.pathID("job_id", "Job")
	if !ok {
		return
	}
	if id > int64(len(rc.w.jobs)) {
		rc.notFound("Job", id)
		return
	}
	j := rc.w.jobs[id-1]
	sh := rc.view().shape()
	var e enc
	e.obj()
	e.key("bulk_job")
	e.obj()
	e.key("id")
	e.id(j.id, sh)
	e.key("created_time")
	e.time(j.created, sh.loc)
	e.key("updated_time")
	e.time(j.updated, sh.loc)
	e.key("status")
	e.str(j.status)
	e.key("links")
	e.arr()
	link(&e, fmt.Sprintf("%s/api/v1/jobs/%d", rc.base, j.id), "GET", "self")
	if j.status == jobCompleted {
		link(&e, j.reportPath(), "GET", "download")
	}
	e.end(']')
	e.key("job_data")
	e.obj()
	e.key("path")
	if j.status == jobCompleted {
		e.str(j.reportPath())
	} else {
		e.null()
	}
	e.end('}')
	e.end('}')
	e.end('}')
	rc.send(http.StatusOK, e.bytes())
}

func link(e *enc, href, method, rel string) {
	e.obj()
	e.key("href")
	e.str(href)
	e.key("method")
	e.str(method)
	e.key("rel")
	e.str(rel)
	e.end('}')
}
