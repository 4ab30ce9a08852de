package callcenter

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Error types the API sends in error_type.
const (
	ErrorTypeNotFound   = "record_not_found"
	ErrorTypeValidation = "model_validation_failed"
)

// ErrMalformedResponse is wrapped by the error of a successful response whose body
// cannot be decoded (after the retries the request allows).
var ErrMalformedResponse = errors.New("malformed response")

// APIError is a failure reported by the server: a non-success status with its
// error object. A body that is not the JSON error object (an HTML page from a
// proxy) still yields an APIError, with a shortened text of the body as Message.
// No field ever holds the API key: server text that echoes it is redacted.
type APIError struct {
	// Operation names the client operation, e.g. "get user 42".
	Operation string
	Method    string
	// Path is the request path, without query.
	Path   string
	Status int
	// Type is the error_type (e.g. ErrorTypeNotFound); "" when the body had none.
	Type    string
	Message string
	// Errors lists the offending attributes of a validation failure, as sent (their
	// structure is not shown by the spec).
	Errors []json.RawMessage
	// RetryAfter is the wait the server asked for in Retry-After; 0 when absent.
	RetryAfter time.Duration
	// Rate is what the response's X-RateLimit-* headers said.
	Rate RateState
}

// Error reads "HTTP 404 record_not_found: User not found with id 7".
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d", e.Status)
	if e.Type != "" {
		b.WriteString(" " + e.Type)
	} else if t := http.StatusText(e.Status); t != "" {
		b.WriteString(" " + t)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if len(e.Errors) > 0 {
		fmt.Fprintf(&b, " (%d field errors)", len(e.Errors))
	}
	return b.String()
}

// ValidationError is a request refused by the client before sending: nothing was
// sent and retrying cannot help.
type ValidationError struct {
	// Operation names the client operation, e.g. "create user".
	Operation string
	// Problems lists every problem found.
	Problems []string
}

// Error reads "invalid request: email: ...; role: ...".
func (e *ValidationError) Error() string {
	return "invalid request: " + strings.Join(e.Problems, "; ")
}

// IsNotFound reports whether err is a 404 or a record_not_found from the server.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Type == ErrorTypeNotFound)
}

// IsValidation reports whether the request was invalid: refused by the client
// (*ValidationError) or by the server (422 or model_validation_failed).
func IsValidation(err error) bool {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return true
	}
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusUnprocessableEntity || ae.Type == ErrorTypeValidation)
}

// IsUnauthorized reports whether the server refused the credentials (401).
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports whether the key lacks the permission (403), as for an export
// by a user who is not an admin.
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsRateLimited reports whether the server answered 429 (after any retries).
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }

func hasStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// maxMessage bounds the message kept from a non-JSON error body.
const maxMessage = 200

// newAPIError builds the APIError of a response with status and body; scrub removes
// the API key from server text.
func newAPIError(status int, body []byte, scrub func(string) string) *APIError {
	e := &APIError{Status: status}
	var obj struct {
		Type    string            `json:"error_type"`
		Message string            `json:"message"`
		Error   string            `json:"error"`
		Errors  []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &obj); err == nil && (obj.Type != "" || obj.Message != "" || obj.Error != "") {
		e.Type, e.Message = scrub(obj.Type), scrub(obj.Message)
		if e.Message == "" {
			e.Message = scrub(obj.Error)
		}
		for _, raw := range obj.Errors {
			e.Errors = append(e.Errors, json.RawMessage(scrub(string(raw))))
		}
		return e
	}
	e.Message = scrub(bodyText(body))
	return e
}

var (
	htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// bodyText shortens a non-JSON body for a message: the title of an HTML page, or
// the text with tags removed and white space collapsed, cut to maxMessage bytes.
func bodyText(body []byte) string {
	s := string(body)
	if m := htmlTitle.FindStringSubmatch(s); m != nil {
		s = m[1]
	} else {
		s = htmlTag.ReplaceAllString(s, " ")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut]) + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
