package callcenter

import (
	"context"
	"fmt"
	"net/http"
)

// Export starts an export of account data (POST /account/export, 202) and returns
// the job to follow with GetJob (or use ExportAndWait). The request is checked
// before sending (ExportRequest.Validate): at least one resource among calls,
// call_metrics, teams and users; include only for calls and call_metrics; json, or
// csv without calls; a date range for calls and call_metrics, start before end,
// at most two years; delivery "" or email. Only account admins
// and admins may export: other keys get a 403 (IsForbidden). Like CreateUser it is
// retried only when the server cannot have acted on it.
func (c *Client) Export(ctx context.Context, req ExportRequest) (ExportJob, error) {
	op := "export"
	if p := req.problems(); p != nil {
		return ExportJob{}, invalid(op, p)
	}
	return sendOne[ExportJob](ctx, c, op, http.MethodPost, "/account/export", req, "job")
}

// GetJob reads a job (GET /jobs/{id} → {bulk_job: job}).
func (c *Client) GetJob(ctx context.Context, id int64) (Job, error) {
	op := fmt.Sprintf("get job %d", id)
	if p := idProblems([]string{"job id"}, id); p != nil {
		return Job{}, invalid(op, p)
	}
	return getOne[Job](ctx, c, op, fmt.Sprintf("/jobs/%d", id), "bulk_job")
}
