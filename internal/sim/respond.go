package sim

import (
	"fmt"
	"net/http"
	"strconv"
)

// reqCtx is one API request being served.
type reqCtx struct {
	s         *Sim
	w         *world // set once the world lock is held
	rw        http.ResponseWriter
	r         *http.Request
	key       apiKey
	base      string
	malformed bool // truncate the body of a successful response
}

// fieldError is an entry of errors[] in a model_validation_failed response.
type fieldError struct {
	field, message string
}

// send writes a JSON response. A successful body is cut in half when the request
// drew the malformed-body fault.
func (rc *reqCtx) send(status int, body []byte) {
	if rc.malformed && status < 300 && len(body) > 1 {
		body = body[:len(body)/2]
	}
	h := rc.rw.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	rc.rw.WriteHeader(status)
	_, _ = rc.rw.Write(body)
}

// fail writes the error object: {error_type, message, errors}; errors is empty
// unless given.
func (rc *reqCtx) fail(status int, typ, msg string, errs ...fieldError) {
	var e enc
	e.obj()
	e.key("error_type")
	e.str(typ)
	e.key("message")
	e.str(msg)
	e.key("errors")
	e.arr()
	for _, fe := range errs {
		e.obj()
		e.key("field")
		e.str(fe.field)
		e.key("message")
		e.str(fe.message)
		e.end('}')
	}
	e.end(']')
	e.end('}')
	rc.malformed = false
	rc.send(status, e.bytes())
}

// invalid is 422 model_validation_failed listing errs.
func (rc *reqCtx) invalid(errs []fieldError) {
	msg := "Validation failed"
	if len(errs) > 0 {
		msg += ": " + errs[0].field + " " + errs[0].message
	}
	rc.fail(http.StatusUnprocessableEntity, "model_validation_failed", msg, errs...)
}

// notFound is 404 record_not_found naming the record type and id.
func (rc *reqCtx) notFound(kind string, id any) {
	rc.fail(http.StatusNotFound, "record_not_found", fmt.Sprintf("Couldn't find %s with 'id'=%v", kind, id))
}

// forbidden is 403 for a key whose role may not do the operation.
func (rc *reqCtx) forbidden(what string) {
	rc.fail(http.StatusForbidden, "access_denied", fmt.Sprintf("%s requires an Account Admin or Admin API key (this key's role: %s)", what, rc.key.role))
}

// admin reports whether the key may write (Account Admin or Admin).
func (rc *reqCtx) admin() bool {
	return rc.key.role == RoleAccountAdmin || rc.key.role == RoleAdmin
}

// serverError writes an injected 5xx, as an error object or as a proxy's HTML page.
func (rc *reqCtx) serverError(status int, html bool) {
	if !html {
		rc.fail(status, "internal_server_error", http.StatusText(status))
		return
	}
	body := fmt.Sprintf("<html><head><title>%d %s</title></head><body><h1>%d %s</h1></body></html>\n",
		status, http.StatusText(status), status, http.StatusText(status))
	rc.rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc.rw.WriteHeader(status)
	_, _ = rc.rw.Write([]byte(body))
}

// pathID parses the path value name as a positive integer; false (after writing a
// 404 naming kind) when it is not one.
func (rc *reqCtx) pathID(name, kind string) (int64, bool) {
	raw := rc.r.PathValue(name)
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		rc.notFound(kind, raw)
		return 0, false
	}
	return id, true
}
