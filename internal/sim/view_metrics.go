package sim

// metric writes a call metric; life_cycle only when life is set.
func (v *view) metric(e *enc, c *call, life bool) {
	sh := v.shape()
	m := &c.m
	e.obj()
	e.key("id")
	e.id(m.id, sh)
	e.key("call_id")
	e.id(c.id, sh)
	e.key("created_time")
	e.time(m.created, sh.loc)
	e.key("updated_time")
	e.time(m.updated, sh.loc)
	e.dur("ivr_time", m.ivr)
	e.dur("hold_duration", m.hold)
	e.dur("call_work_time", m.work)
	e.ndur("total_ringing_time", m.ring, m.ringNull)
	e.dur("talk_time", m.talk)
	e.ndur("answering_speed", m.answer, m.answerNull)
	e.dur("recording_duration", m.recDur)
	e.ndur("bill_duration", m.bill, m.billNull)
	e.key("cost")
	if m.billNull {
		e.null()
	} else {
		e.float(m.cost)
	}
	e.key("cost_unit")
	e.str(costUnit)
	e.key("csat")
	e.obj()
	e.key("transfer_made")
	e.bool(m.transfer)
	e.key("outcome")
	e.strOrNull(m.outcome)
	e.dur("time", m.csatTime)
	e.end('}')
	e.key("tags")
	e.arr()
	for _, t := range m.tags {
		e.obj()
		e.key("id")
		e.int(int64(t) + 1)
		e.key("name")
		e.str(tagNames[t])
		e.end('}')
	}
	e.end(']')
	if life {
		e.key("life_cycle")
		v.lifeCycle(e, c, sh)
	}
	e.end('}')
}

// lifeCycle writes the metric's life-cycle events (empty until finalized).
func (v *view) lifeCycle(e *enc, c *call, sh shape) {
	tsKey := "time_stamp"
	if sh.tsKey {
		tsKey = "timestamp"
	}
	e.arr()
	for _, ev := range c.m.life {
		e.obj()
		e.key("type")
		e.str(lifeTypes[ev.typ])
		if hasQueue(ev.typ) {
			e.key("queue_id")
			e.nid(ev.queue, sh)
		}
		e.key("id")
		e.nid(ev.agent, sh)
		e.key("leg_type")
		e.int(int64(ev.leg))
		e.key(tsKey)
		e.time(ev.at, sh.loc)
		e.end('}')
	}
	e.end(']')
}
