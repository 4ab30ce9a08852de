package main

import (
	"errors"
	"io"
	"slices"

	"github.com/callbus/callbus/config"
	"github.com/callbus/callbus/internal/cursor"
	"github.com/callbus/callbus/internal/poll"
	"github.com/callbus/callbus/internal/service"
)

// jsonError is a command's error in JSON mode (--json), printed on stdout as
// {"error": …}. The field names and codes are a contract
// (docs/operator-tools.md#machine-readable-output): add, never rename.
type jsonError struct {
	Code     string                  `json:"code"`
	Message  string                  `json:"message"`
	ExitCode int                     `json:"exit_code"`
	Problems []config.SettingProblem `json:"problems,omitempty"` // invalid_configuration: each setting or file to fix
}

// errorCodes map errors to the codes of jsonError, first match wins.
var errorCodes = []struct {
	err  error
	code string
}{
	{service.ErrLeaderRunning, "leader_running"},
	{poll.ErrRewind, "rewind_refused"},
	{cursor.ErrNotLeader, "not_leader"},
	{service.ErrStillConfigured, "still_configured"},
	{service.ErrOutboxNotEmpty, "outbox_not_empty"},
}

// jsonReported is an error already printed as JSON: main prints it no more.
type jsonReported struct{ error }

func (e jsonReported) Unwrap() error { return e.error }

// wantsJSON reports whether args ask for JSON output (--json before any "--").
func wantsJSON(args []string) bool {
	if i := slices.Index(args, "--"); i >= 0 {
		args = args[:i]
	}
	return slices.Contains(args, "--json") || slices.Contains(args, "-json")
}

// reportJSON writes err to w as {"error": …} and returns it marked as reported.
func reportJSON(w io.Writer, err error) error {
	je := jsonError{Code: "error", Message: err.Error(), ExitCode: exitStatus(err)}
	switch ps := config.SettingProblems(err); {
	case len(ps) > 0:
		je.Code, je.Problems = "invalid_configuration", ps
	default:
		for _, c := range errorCodes {
			if errors.Is(err, c.err) {
				je.Code = c.code
				break
			}
		}
		if je.Code == "error" && je.ExitCode == 2 {
			je.Code = "usage"
		}
	}
	_ = writeJSON(w, map[string]jsonError{"error": je})
	return jsonReported{err}
}

// exitStatus is the process's exit status for err (see the exit codes in
// `poller --help`).
func exitStatus(err error) int {
	var ec exitCode
	if errors.As(err, &ec) {
		return ec.code
	}
	return 1
}
