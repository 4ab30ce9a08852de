package sim

import (
	"fmt"
	"strconv"
)

// callParts says which embedded parts of a call are written; the others are null
// (exports without the matching include). The API writes all but life_cycle.
type callParts struct {
	participants, recording, redact, integrated, life bool
}

var apiCallParts = callParts{participants: true, recording: true, redact: true, integrated: true}

// call writes a call object. The fields are written in the API's order by a
// few helpers, one per group of fields, so each stays short.
func (v *view) call(e *enc, c *call, parts callParts) {
	sh := v.shape()
	full := !sh.early
	hz := v.hostile.read(c)
	if v.reportPoison != nil && v.reportPoison(c.id) {
		hz.poison = poisonBadDate
	}
	e.obj()
	v.callHead(e, c, sh, hz.poison)
	callAssignments(e, c, sh)
	e.key("call_notes")
	e.strOrNull(c.notes)
	callBillAndTimes(e, c, sh, hz)
	v.callAttachments(e, c, parts, sh)
	e.key("participants")
	if parts.participants {
		poison := hz.poison
		e.arr()
		for i := range hz.parts {
			v.participant(e, c, &hz.parts[i], sh, poison)
			poison = poisonNone // the first participant carries it
		}
		e.end(']')
	} else {
		e.null()
	}
	if full {
		e.key("parallel_call_groups")
		e.raw(`[]`)
	}
	if parts.life {
		e.key("life_cycle")
		v.lifeCycle(e, c, sh)
	}
	e.end('}')
}

// callHead writes a call's id (left out under poisonNoID), direction, parent and
// root calls, number and assigned agent.
func (v *view) callHead(e *enc, c *call, sh shape, poison int) {
	if poison != poisonNoID {
		e.key("id")
		e.id(c.id, sh)
	}
	e.key("direction")
	e.str(direction(c.outbound, sh.title))
	e.key("parent_call_id")
	e.nid(c.parent, sh)
	e.key("root_call_id")
	e.nid(c.root, sh)
	e.key("phone_number_id")
	e.id(c.number.id, sh)
	e.key("phone_number")
	e.str(c.number.number)
	e.key("assigned_agent_id")
	e.nid(c.agentID, sh)
	if !sh.early {
		e.key("assigned_agent_name")
		if u := v.w.user(c.agentID); u != nil {
			e.str(u.name)
		} else {
			e.null()
		}
	}
}

// callAssignments writes the assigned team, queue and IVR ids (and names in the
// full shape).
func callAssignments(e *enc, c *call, sh shape) {
	var teamID, queueID, ivrID int64
	var teamName, queueName, ivrName string
	if c.queue != nil {
		teamID, teamName, queueID, queueName = c.queue.team.id, c.queue.team.name, c.queue.id, c.queue.name
	}
	if c.ivr != nil {
		ivrID, ivrName = c.ivr.id, c.ivr.name
	}
	for _, f := range []struct {
		name string
		id   int64
		text string
	}{{"team", teamID, teamName}, {"call_queue", queueID, queueName}, {"ivr", ivrID, ivrName}} {
		e.key("assigned_" + f.name + "_id")
		e.nid(f.id, sh)
		if !sh.early {
			e.key("assigned_" + f.name + "_name")
			e.strOrNull(f.text)
		}
	}
}

// callBillAndTimes writes the bill duration (an object under poisonWrongType) and
// the created and updated times (shifted into the future under that hazard).
func callBillAndTimes(e *enc, c *call, sh shape, hz served) {
	if hz.poison == poisonWrongType {
		e.key("bill_duration")
		e.raw(`{"value":` + strconv.FormatInt(c.bill, 10) + `}`)
	} else {
		e.dur("bill_duration", c.bill)
	}
	var shift sec
	if hz.future {
		shift = futureShift
	}
	e.key("created_time")
	e.time(c.created+shift, sh.loc)
	e.key("updated_time")
	e.time(c.updated+shift, sh.loc)
}

// callAttachments writes the recording, the recording to redact and the
// integrated resources, each null when parts leaves it out.
func (v *view) callAttachments(e *enc, c *call, parts callParts, sh shape) {
	full := !sh.early
	e.key("recording")
	if parts.recording && c.rec != nil {
		v.recording(e, c, c.rec, sh, full)
	} else {
		e.null()
	}
	if !full {
		return
	}
	e.key("recording_to_redact")
	if parts.redact && c.redact != nil {
		v.recording(e, c, c.redact, sh, false)
	} else {
		e.null()
	}
	e.key("integrated_resources")
	switch {
	case !parts.integrated:
		e.null()
	case c.integrated:
		e.raw(`[{"id":1,"integration_name":"Freshdesk","type":"ticket"}]`)
	default:
		e.raw(`[]`)
	}
}

// direction is the call's direction string.
func direction(outbound, title bool) string {
	switch {
	case outbound && title:
		return "Outgoing"
	case outbound:
		return "outgoing"
	case title:
		return "Incoming"
	}
	return "incoming"
}

// recording writes a recording summary (url: the download endpoint) or, for a
// recording to redact, its object (url: the file itself).
func (v *view) recording(e *enc, c *call, r *recording, sh shape, summary bool) {
	e.obj()
	e.key("id")
	e.id(r.id, sh)
	e.key("url")
	if summary {
		e.str(fmt.Sprintf("%s/api/v1/calls/%d/recording/%d", v.base, c.id, r.id))
		e.key("transcription_url")
		if r.transcript {
			e.str(fmt.Sprintf("%s/recordings/%d.txt", v.base, r.id))
		} else {
			e.null()
		}
	} else {
		e.str(fmt.Sprintf("%s/recordings/%d.mp3", v.base, r.id))
	}
	e.dur("duration", r.duration)
	e.end('}')
}

// participant writes a call participant, with a poisonBadDate or poisonNullTime
// hazard when poison says so.
func (v *view) participant(e *enc, c *call, p *participant, sh shape, poison int) {
	e.obj()
	e.key("id")
	e.id(p.id, sh)
	e.key("call_id")
	e.id(c.id, sh)
	cust := p.customer != 0
	callerFields(e, p, sh)
	e.key("participant_id")
	kind := "Agent"
	if cust {
		e.id(p.customer, sh)
		kind = "Customer"
	} else {
		e.id(p.agent, sh)
	}
	e.key("participant_type")
	e.str(kind)
	e.key("connection_type")
	if sh.decimal {
		e.raw(strconv.Itoa(int(p.conn)) + ".0")
	} else {
		e.int(int64(p.conn))
	}
	participantState(e, p, sh, poison)
	e.end('}')
}

// callerFields writes a participant's caller id, number and (in the full shape)
// name, all null for an agent's leg.
func callerFields(e *enc, p *participant, sh shape) {
	cust := p.customer != 0
	e.key("caller_id")
	if cust {
		e.id(callerBase+p.customer, sh)
	} else {
		e.null()
	}
	e.key("caller_number")
	if cust {
		e.str(fmt.Sprintf("+1212555%04d", p.customer%10000))
	} else {
		e.null()
	}
	if !sh.early {
		e.key("caller_name")
		if cust {
			e.str(customerName(p.customer))
		} else {
			e.null()
		}
	}
}

// participantState writes a participant's status, duration, enqueued time (a bad
// date under poisonBadDate), cost and times (updated null under poisonNullTime).
func participantState(e *enc, p *participant, sh shape, poison int) {
	e.key("call_status")
	e.int(int64(p.status))
	e.dur("duration", p.duration)
	e.key("enqueued_time")
	if poison == poisonBadDate {
		e.str(poisonDate)
	} else {
		e.time(p.enqueued, sh.loc)
	}
	e.key("cost")
	if p.hasCost {
		e.float(p.cost)
	} else {
		e.null()
	}
	e.key("cost_unit")
	e.str(costUnit)
	e.key("created_time")
	e.time(p.created, sh.loc)
	e.key("updated_time")
	if poison == poisonNullTime {
		e.null()
	} else {
		e.time(p.updated, sh.loc)
	}
}

// customerName is a stable name for a customer id.
func customerName(id int64) string {
	return firstNames[id%int64(len(firstNames))] + " " + lastNames[(id/int64(len(firstNames)))%int64(len(lastNames))]
}
