package callcenter

import (
	"encoding/json"
	"strings"

	"github.com/callbus/callbus/events"
	"github.com/callbus/callbus/internal/apijson"
)

// Rejection reasons (Rejection.Reason): a bounded set, fit for metric labels.
const (
	// RejectMalformed: the item is not a JSON object.
	RejectMalformed = "malformed"
	// RejectWrongType: a field holds a value of the wrong type.
	RejectWrongType = "wrong_type"
	// RejectBadTime: a date-time field holds no real date ("0000-00-00 00:00:00").
	RejectBadTime = "bad_time"
	// RejectNullTime: a date-time the record cannot do without is null or absent.
	RejectNullTime = "null_time"
	// RejectMissingID: the record has no usable id.
	RejectMissingID = "missing_id"
)

// Rejection is one record of a list page that was left out because it could not
// be decoded or failed a sanity rule. The rest of the page is served as usual; the
// record is left out of Page.Items until a later read serves it correctly.
type Rejection struct {
	// Resource is the list's key ("calls", "call_metrics", "users", "teams", …).
	Resource string
	// ID is the record's id when it has a readable one (the call id for call
	// metrics), else 0.
	ID int64
	// Field is the path of the bad value ("participants.enqueued_time"); empty
	// when the item as a whole is bad.
	Field string
	// Reason is one of the Reject* constants.
	Reason string
	// Detail says what was wrong, without the value itself (values may be
	// personal data).
	Detail string
	// Source names where the record was read when not from a list page (an
	// export report: see DecodeRecord); empty for list reads.
	Source string
}

// WithRejectionHook sets a function called once for every record a list read
// left out (see Rejection), after the page that held it was read successfully. It
// must be fast and safe for concurrent use. Without it, rejections are logged at
// warn level only.
func WithRejectionHook(f func(Rejection)) Option { return func(c *Client) { c.onReject = f } }

// decodeItem reads the next list item into v, in the pass that reads the page, or
// returns why it is rejected. A rejected item has been read whole: the page goes on
// with the next (a syntax error fails the page instead, and returns nil here).
func decodeItem[T any](d *apijson.Decoder, resource string, v *T) *Rejection {
	mark := d.Mark()
	err := apijson.Into(d, v)
	if d.Failed() != nil {
		return nil
	}
	if err == nil {
		field, reason := insane(v)
		if reason == "" {
			return nil
		}
		return &Rejection{Resource: resource, ID: itemID(d.Span(mark)), Field: field, Reason: reason,
			Detail: field + ": " + reason}
	}
	r := rejectionOf(err)
	r.Resource, r.ID = resource, itemID(d.Span(mark))
	return &r
}

// rejectionOf classifies a decoding error: the field path from its fieldError
// chain, and the reason from the innermost field's kind.
func rejectionOf(err error) Rejection {
	path, _ := apijson.FieldPath(err)
	r := Rejection{Field: strings.Join(path, "."), Detail: err.Error()}
	switch {
	case len(path) == 0:
		r.Reason = RejectMalformed
	case strings.HasSuffix(path[len(path)-1], "_time"):
		r.Reason = RejectBadTime
	case path[len(path)-1] == "id" || path[len(path)-1] == "call_id":
		r.Reason = RejectMissingID
	default:
		r.Reason = RejectWrongType
	}
	return r
}

// itemID reads an item's id ("id", else "call_id") as best it can: 0 when none.
func itemID(raw json.RawMessage) int64 {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return 0
	}
	for _, k := range []string{"id", "call_id"} {
		if v, ok, err := apijson.ParseInt(obj[k]); ok && err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// insane returns the field and reason of the first sanity rule v breaks beyond
// decoding ("" when none is, or v has no rules).
func insane(v any) (field, reason string) {
	switch r := v.(type) {
	case *events.Call:
		return insaneCall(r)
	case *events.CallMetric:
		switch {
		case r.CallID <= 0:
			return "call_id", RejectMissingID
		case r.CreatedTime.IsZero():
			return "created_time", RejectNullTime
		}
	case *events.User:
		if r.ID <= 0 {
			return "id", RejectMissingID
		}
	case *events.Team:
		if r.ID <= 0 {
			return "id", RejectMissingID
		}
	}
	return "", ""
}

// insaneCall: a participant without created_time cannot be placed in its chain.
// A call's null created_time is tolerated: the poller tracks the call from when
// it first saw it and dates its call.created then, and a window read takes no
// conclusion from it (callsInWindow, listOrder). A null updated_time is
// tolerated too: the diff dates such a change by the call or the read, and never
// ends a call twice for it.
func insaneCall(c *events.Call) (string, string) {
	if c.ID <= 0 {
		return "id", RejectMissingID
	}
	for _, p := range c.Participants {
		switch {
		case p.ID <= 0:
			return "participants.id", RejectMissingID
		case p.CreatedTime.IsZero():
			return "participants.created_time", RejectNullTime
		}
	}
	return "", ""
}

// DecodeRecord reads one record of resource ("calls", "call_metrics", "users",
// "teams") that was not read from a list page (a record of an export report)
// exactly as a list item is read: the same decoding and sanity rules. A record
// that fails them is rejected alone, as list reads reject theirs: it is logged
// at debug level under op and reported to the rejection hook
// (WithRejectionHook), and DecodeRecord returns false; the caller goes on with
// the next record. raw must be one JSON value (a report reader hands each
// element of an array). Safe for concurrent use.
func DecodeRecord[T any](c *Client, op, resource string, raw []byte, v *T) bool {
	var rej *Rejection
	read := func(d *apijson.Decoder) error { rej = decodeItem(d, resource, v); return nil }
	var err error
	if c.noRaw {
		err = apijson.DecodeWithoutRaw(raw, read)
	} else {
		err = apijson.Decode(raw, read)
	}
	if err != nil && rej == nil { // not one JSON value: nothing was read of it
		rej = &Rejection{Resource: resource, Reason: RejectMalformed, Detail: err.Error()}
	}
	if rej == nil {
		c.redact(v)
		return true
	}
	rej.Source = op
	c.reject(op, *rej)
	return false
}
