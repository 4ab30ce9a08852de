package sim

import (
	"errors"
	"fmt"
)

// JobOutcome is how a scripted export job ends (Config.Jobs).
type JobOutcome int

// Job outcomes. JobCompletes is the zero value.
const (
	JobCompletes JobOutcome = iota // started, zip_in_progress, completed
	JobFails                       // started, zip_in_progress, then "failed" for good
	JobStalls                      // started, then zip_in_progress for ever
)

// jobFailed is the status of a failed job: not one of the spec's three, as
// field note 9 warns.
const jobFailed = "failed"

// ReportFaults are the hazards of JSON export reports (field note 9 and issue
// 23); the zero value serves none. Which calls they hit is a seeded hash of the
// call id, so every report of a world hits the same calls
// (Sim.PoisonedInReports, Sim.DuplicatedInReports).
type ReportFaults struct {
	// PoisonRate is the fraction of calls whose first participant is served in
	// reports with enqueued_time "0000-00-00 00:00:00", the poison list reads
	// serve too (Hostile.PoisonRate).
	PoisonRate float64
	// DuplicateRate is the fraction of calls listed twice: right after the call,
	// an older copy of it, as it was when created (its participants in progress,
	// updated_time its created_time).
	DuplicateRate float64
	// OddZip serves zipped reports (ZipReports) with a manifest.json and a macOS
	// resource fork (__MACOSX/export/._calls.json) before the report, which is
	// named export/calls.json.
	OddZip bool
}

func (r ReportFaults) check() []error {
	var errs []error
	if r.PoisonRate < 0 || r.PoisonRate > 1 || r.DuplicateRate < 0 || r.DuplicateRate > 1 {
		errs = append(errs, fmt.Errorf("report poison rate %v, duplicate rate %v: must be within [0, 1]", r.PoisonRate, r.DuplicateRate))
	}
	return errs
}

func checkJobs(c *Config) []error {
	var errs []error
	if c.JobStallRate < 0 || c.JobFailRate < 0 || c.JobStallRate+c.JobFailRate > 1 {
		errs = append(errs, errors.New("job stall and fail rates: must be within [0, 1] and add up to 1 at most"))
	}
	for i, o := range c.Jobs {
		if o < JobCompletes || o > JobStalls {
			errs = append(errs, fmt.Errorf("jobs[%d] %d: want JobCompletes, JobFails or JobStalls", i, o))
		}
	}
	return append(errs, c.Reports.check()...)
}

// Salts of the report hazards' hashes.
const (
	saltReportPoison    = 0x9e9015
	saltReportDuplicate = 0xd0b1e
)

// PoisonedInReports reports whether call id is served poisoned in export reports
// (ReportFaults.PoisonRate).
func (s *Sim) PoisonedInReports(id int64) bool {
	return hashPick(s.cfg.Seed, id, saltReportPoison, s.cfg.Reports.PoisonRate)
}

// DuplicatedInReports reports whether call id is listed twice in export reports
// (ReportFaults.DuplicateRate).
func (s *Sim) DuplicatedInReports(id int64) bool {
	return hashPick(s.cfg.Seed, id, saltReportDuplicate, s.cfg.Reports.DuplicateRate)
}

// jobOutcome decides how the n-th export job (1-based) ends: as scripted, else
// drawn by r (a uniform draw in [0, 1)) against the stall and fail rates.
func (c *Config) jobOutcome(n int64, r float64) JobOutcome {
	switch {
	case n <= int64(len(c.Jobs)):
		return c.Jobs[n-1]
	case r < c.JobStallRate:
		return JobStalls
	case r < c.JobStallRate+c.JobFailRate:
		return JobFails
	}
	return JobCompletes
}

// olderCopy is c as it was when created, for a duplicate listing: its
// participants in progress and nothing updated since.
func olderCopy(c *call) *call {
	old := *c
	old.updated, old.ended = c.created, false
	old.parts = make([]participant, len(c.parts))
	for i, p := range c.parts {
		p.status, p.updated, p.duration = csInProgress, p.created, 0
		old.parts[i] = p
	}
	return &old
}
