package callcenter

import (
	"encoding/json"
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

// Export job statuses (Job.Status, ExportJob.Status).
const (
	JobStarted       = "started"
	JobZipInProgress = "zip_in_progress"
	JobCompleted     = "completed"
)

// ExportJob is the response of Export: the id of the job to read with GetJob.
type ExportJob struct {
	ID      int64  `json:"id"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// UnmarshalJSON decodes an export-job creation response tolerantly.
func (j *ExportJob) UnmarshalJSON(data []byte) error {
	*j = ExportJob{}
	return apijson.Object("export job", data,
		apijson.Key("id", apijson.Int(&j.ID)),
		apijson.Key("status", apijson.Str(&j.Status)),
		apijson.Key("message", apijson.Str(&j.Message)),
	)
}

// Job is an asynchronous job (an account export). Once Status is JobCompleted,
// JobData.Path is the URL of the report, valid for 7 days.
type Job struct {
	ID          int64     `json:"id"`
	CreatedTime time.Time `json:"created_time"`
	UpdatedTime time.Time `json:"updated_time"`
	// Status is JobStarted, JobZipInProgress or JobCompleted.
	Status  string    `json:"status"`
	Links   []JobLink `json:"links"`
	JobData *JobData  `json:"job_data"`

	// Raw is the JSON the job was decoded from (nil when built in Go).
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a job tolerantly.
func (j *Job) UnmarshalJSON(data []byte) error {
	*j = Job{Raw: apijson.KeepRaw(data)}
	return apijson.Object("job", data,
		apijson.Key("id", apijson.Int(&j.ID)),
		apijson.Key("created_time", apijson.Time(&j.CreatedTime)),
		apijson.Key("updated_time", apijson.Time(&j.UpdatedTime)),
		apijson.Key("status", apijson.Str(&j.Status)),
		apijson.Key("links", apijson.Slice(&j.Links)),
		apijson.Key("job_data", apijson.Ptr(&j.JobData)),
	)
}

// JobLink is a link of a job to a related resource.
type JobLink struct {
	Href   string `json:"href"`
	Method string `json:"method"`
	Rel    string `json:"rel"`
}

// UnmarshalJSON decodes a job link tolerantly.
func (l *JobLink) UnmarshalJSON(data []byte) error {
	*l = JobLink{}
	return apijson.Object("job link", data,
		apijson.Key("href", apijson.Str(&l.Href)),
		apijson.Key("method", apijson.Str(&l.Method)),
		apijson.Key("rel", apijson.Str(&l.Rel)),
	)
}

// JobData is the result of a job.
type JobData struct {
	// Path is the URL of the exported report, valid for 7 days from creation.
	Path string `json:"path"`
}

// UnmarshalJSON decodes job data tolerantly.
func (d *JobData) UnmarshalJSON(data []byte) error {
	*d = JobData{}
	return apijson.Object("job data", data, apijson.Key("path", apijson.Str(&d.Path)))
}
