package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/callbus/callbus/events"
	"github.com/redis/go-redis/v9"
)

// Snapshots (user.snapshot, call.snapshot) come from a resync (poller resync):
// the entity's state as last announced, applied as an upsert under the same
// rule as every event, the stream sequence, so a snapshot never undoes a later
// change, and the entity's next event chains on from the state it carries. A
// view rebuilt from a resync alone holds what one applied from the whole stream
// holds.

// planUserSnapshot upserts an agent from a user.snapshot, with its status names.
func (s *store) planUserSnapshot(d events.UserSnapshotData, v version) ([]string, planner, error) {
	u, st := d.User, d.State
	if u.Deleted {
		return s.planUser(u, true, v)
	}
	return s.planAgentState(u, st, v, func(next agent) string {
		return fmt.Sprintf("agent %d %s resynced: %s", next.ID, next.Name, next.StatusName)
	})
}

// planCallSnapshot upserts a call and its participants from a call.snapshot; a
// call every participant of which is terminal has ended and is closed as by
// call.ended.
func (s *store) planCallSnapshot(c events.Call, v version) ([]string, planner, error) {
	if callEnded(c) {
		return s.planCallEnded(c, v)
	}
	key, members := s.key("call", c.ID), s.key("call", c.ID, "participants")
	keys := []string{key, members}
	for _, p := range c.Participants {
		keys = append(keys, s.key("participant", c.ID, p.ID))
	}
	return keys, func(ctx context.Context, tx *redis.Tx, resendOf uint64) (change, error) {
		v.ResendOf = resendOf
		var cur call
		found, err := getJSON(ctx, tx, key, &cur)
		if err != nil || (found && (cur.Ended || !v.newerThan(cur.Version))) {
			return change{superseded: true}, err
		}
		next := call{ID: c.ID, Direction: string(c.Direction), Queue: deref(c.AssignedCallQueueName), Agent: deref(c.AssignedAgentName),
			Created: c.CreatedTime, Updated: v.Time, Version: v}
		var parts []participant
		for _, ep := range c.Participants {
			var old participant
			pk := s.key("participant", c.ID, ep.ID)
			if ok, err := getJSON(ctx, tx, pk, &old); err != nil {
				return change{}, err
			} else if ok && !v.newerThan(old.Version) {
				continue // a later event of the participant was applied already
			}
			parts = append(parts, participant{ID: ep.ID, Type: strings.ToLower(ep.ParticipantType), ParticipantID: ep.ParticipantID,
				Status: ep.CallStatus, StatusLabel: events.CallStatusLabel(ep.CallStatus), Updated: v.Time, Version: v})
		}
		return change{line: fmt.Sprintf("call %d resynced: %s, %d participants", c.ID, next.Direction, len(c.Participants)),
			write: func(ctx context.Context, p redis.Pipeliner) {
				p.Set(ctx, key, mustJSON(next), 0)
				p.SAdd(ctx, s.key("calls"), itoa(c.ID))
				for _, pt := range parts {
					p.Set(ctx, s.key("participant", c.ID, pt.ID), mustJSON(pt), 0)
					p.SAdd(ctx, members, itoa(pt.ID))
				}
			}}, nil
	}, nil
}

// callEnded is the producer's rule for call.ended: participants listed, every
// one of them terminal.
func callEnded(c events.Call) bool {
	if len(c.Participants) == 0 {
		return false
	}
	for _, p := range c.Participants {
		if !events.CallStatusTerminal(p.CallStatus) {
			return false
		}
	}
	return true
}
