package callcenter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/callbus/callbus/internal/apijson"
)

// DownloadRecording returns the download URL of a call's recording (GET
// /calls/{call_id}/recording/{recording_id} answers 302 with the URL in Location;
// the redirect is never followed). A relative Location is resolved against the
// base URL.
func (c *Client) DownloadRecording(ctx context.Context, callID, recordingID int64) (string, error) {
	op := fmt.Sprintf("download recording %d of call %d", recordingID, callID)
	if p := idProblems([]string{"call id", "recording id"}, callID, recordingID); p != nil {
		return "", invalid(op, p)
	}
	var loc string
	_, err := c.do(ctx, request{op: op, method: http.MethodGet,
		path: fmt.Sprintf("/calls/%d/recording/%d", callID, recordingID),
		ok:   func(s int) bool { return s >= 300 && s < 400 },
		decode: func(_ int, h http.Header, _ []byte) error {
			l := h.Get("Location")
			if l == "" {
				return errors.New("redirect without a location")
			}
			u, err := c.base.Parse(l)
			if err != nil {
				return fmt.Errorf("location: %w", err)
			}
			loc = u.String()
			return nil
		}})
	return loc, err
}

// DeleteRecording deletes a call's recording (DELETE
// /calls/{call_id}/recording/{recording_id}) and reports the server's status: true
// when the recording was deleted.
func (c *Client) DeleteRecording(ctx context.Context, callID, recordingID int64) (bool, error) {
	op := fmt.Sprintf("delete recording %d of call %d", recordingID, callID)
	if p := idProblems([]string{"call id", "recording id"}, callID, recordingID); p != nil {
		return false, invalid(op, p)
	}
	var deleted bool
	_, err := c.do(ctx, request{op: op, method: http.MethodDelete,
		path: fmt.Sprintf("/calls/%d/recording/%d", callID, recordingID),
		decode: func(_ int, _ http.Header, body []byte) error {
			found := false
			status := apijson.Bool(&deleted)
			err := apijson.Object("delete recording response", body,
				apijson.Key("status", func(raw json.RawMessage) error { found = true; return status(raw) }))
			if err == nil && !found {
				err = errors.New("no status in the response")
			}
			return err
		}})
	return deleted, err
}
