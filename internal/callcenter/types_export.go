package callcenter

import (
	"encoding/json"
	"time"

	"github.com/callbus/callbus/internal/apijson"
)

// Export resource names, include values, formats and delivery types.
const (
	ExportCalls       = "calls"
	ExportCallMetrics = "call_metrics"
	ExportTeams       = "teams"
	ExportUsers       = "users"

	IncludeParticipants        = "participants"
	IncludeRecording           = "recording"
	IncludeLifeCycle           = "life_cycle"
	IncludeRecordingToRedact   = "recording_to_redact"
	IncludeIntegratedResources = "integrated_resources"

	FormatJSON = "json"
	FormatCSV  = "csv"

	DeliveryEmail = "email"
)

// ExportRequest is the body of Export. See Client.Export for the rules it must
// meet.
type ExportRequest struct {
	// DateRange is required when exporting calls or call metrics.
	DateRange *DateRange `json:"date_range,omitempty"`
	// Resources is what to export; at least one.
	Resources []ExportResource `json:"resources"`
	// OutputFormat is FormatJSON or FormatCSV (csv only for users, teams and
	// call_metrics).
	OutputFormat string `json:"output_format"`
	// DeliveryType is "" or DeliveryEmail (the report is then emailed as well).
	DeliveryType string `json:"delivery_type,omitempty"`
}

// ExportResource names one resource to export and, for calls and call metrics,
// what to include.
type ExportResource struct {
	Name    string   `json:"name"`
	Include []string `json:"include,omitempty"`
}

// DateRange bounds an export. It is sent as UTC date-times with a Z suffix, to the
// second.
type DateRange struct {
	StartDate time.Time `json:"start_date"`
	EndDate   time.Time `json:"end_date"`
}

// MarshalJSON writes both dates in UTC with a Z suffix, to the second.
func (d DateRange) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		StartDate string `json:"start_date"`
		EndDate   string `json:"end_date"`
	}{utcSeconds(d.StartDate), utcSeconds(d.EndDate)})
}

// UnmarshalJSON decodes a date range tolerantly.
func (d *DateRange) UnmarshalJSON(data []byte) error {
	*d = DateRange{}
	return apijson.Object("date range", data,
		apijson.Key("start_date", apijson.Time(&d.StartDate)),
		apijson.Key("end_date", apijson.Time(&d.EndDate)),
	)
}

// utcSeconds formats t as the API's safe query and body form: UTC, Z, seconds.
func utcSeconds(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
