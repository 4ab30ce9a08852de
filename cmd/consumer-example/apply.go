package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/callbus/callbus/events"
	"github.com/redis/go-redis/v9"
)

// appliedTypes are the event types the view applies; the consumer subscribes to
// these only. Teams and metrics are not part of it.
var appliedTypes = []events.Type{
	events.UserCreated, events.UserUpdated, events.UserDeleted, events.UserStatusChanged,
	events.CallCreated, events.CallUpdated, events.CallEnded,
	events.ParticipantJoined, events.ParticipantStatusChanged,
	events.UserSnapshot, events.CallSnapshot, // a resync's (snapshot.go)
}

// endedMemory is how long an ended call is remembered to ignore its late events.
const endedMemory = 24 * time.Hour

// plan returns the keys the event reads and its planner; a nil planner for an
// event the view does not apply.
func (s *store) plan(ev events.Event, v version) ([]string, planner, error) {
	if md := ev.Metadata(); md.DataEmptied() {
		return s.planEmptied(ev, md.Subject, v)
	}
	switch e := ev.(type) {
	case *events.UserCreatedEvent:
		return s.planUser(e.Data.User, e.Data.User.Deleted, v)
	case *events.UserUpdatedEvent:
		return s.planUser(e.Data.User, e.Data.User.Deleted, v)
	case *events.UserDeletedEvent:
		return s.planUser(e.Data.User, true, v)
	case *events.UserStatusChangedEvent:
		return s.planUserStatus(e.Data, v)
	case *events.CallCreatedEvent:
		return s.planCall(e.Data.Call, "opened", v)
	case *events.CallUpdatedEvent:
		return s.planCall(e.Data.Call, "updated", v)
	case *events.CallEndedEvent:
		return s.planCallEnded(e.Data.Call, v)
	case *events.ParticipantJoinedEvent:
		return s.planParticipant(e.Data.CallID, e.Data.Participant, v)
	case *events.ParticipantStatusChangedEvent:
		return s.planParticipant(e.Data.CallID, e.Data.Participant, v)
	case *events.UserSnapshotEvent:
		return s.planUserSnapshot(e.Data, v)
	case *events.CallSnapshotEvent:
		return s.planCallSnapshot(e.Data.Call, v)
	}
	return nil, nil, nil
}

// planEmptied plans an event the relay published without its data (too large
// for NATS even cut: events.Meta.DataEmptied): a call.ended still ends the call
// its subject names; any other is not applied (its new state is only in the API).
func (s *store) planEmptied(ev events.Event, subject string, v version) ([]string, planner, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(subject, "calls/"), 10, 64)
	if _, ended := ev.(*events.CallEndedEvent); !ended || err != nil {
		return nil, nil, nil
	}
	return s.planCallEnded(events.Call{ID: id}, v)
}

func (s *store) planUser(u events.User, deleted bool, v version) ([]string, planner, error) {
	key := s.key("agent", u.ID)
	return []string{key}, func(ctx context.Context, tx *redis.Tx, resendOf uint64) (change, error) {
		v.ResendOf = resendOf
		var a agent
		found, err := getJSON(ctx, tx, key, &a)
		if err != nil || (found && !v.newerThan(a.Version)) {
			return change{superseded: true}, err
		}
		if deleted {
			gone := agent{ID: u.ID, Name: u.Name, Deleted: true, Version: v}
			return change{line: fmt.Sprintf("agent %d %s deleted", u.ID, u.Name), write: func(ctx context.Context, p redis.Pipeliner) {
				p.Set(ctx, key, mustJSON(gone), s.doneTTL) // a tombstone: an older event cannot bring it back
				p.SRem(ctx, s.key("agents"), itoa(u.ID))
			}}, nil
		}
		next := agent{ID: u.ID, Name: u.Name, Role: u.Role, Status: u.Status, StatusName: userStatusName(u.Status, ""),
			Preference: u.Preference, Updated: v.Time, Version: v}
		if found && !a.Deleted && a.Preference == u.Preference {
			next.PreferenceName = a.PreferenceName // user events carry no status names; keep the known one
		}
		if found && !a.Deleted && a.Status == u.Status {
			next.StatusName = a.StatusName
		}
		line := fmt.Sprintf("agent %d %s (%s): %s", u.ID, u.Name, u.Role, next.StatusName)
		if found && !a.Deleted {
			line = fmt.Sprintf("agent %d %s updated", u.ID, u.Name)
		}
		return change{line: line, write: s.putAgent(key, next)}, nil
	}, nil
}

func (s *store) planUserStatus(d events.UserStatusData, v version) ([]string, planner, error) {
	prev := userStatusName(d.Previous.Status, d.Previous.StatusName)
	return s.planAgentState(d.User, d.Current, v, func(next agent) string {
		return fmt.Sprintf("agent %d %s: %s → %s", next.ID, next.Name, prev, next.StatusName)
	})
}

// planAgentState sets an agent's status to st (a user.status_changed's current
// state, or a user.snapshot's), unless the view holds a newer version; line
// describes the change.
func (s *store) planAgentState(u events.User, st events.UserState, v version, line func(next agent) string) ([]string, planner, error) {
	key := s.key("agent", u.ID)
	return []string{key}, func(ctx context.Context, tx *redis.Tx, resendOf uint64) (change, error) {
		v.ResendOf = resendOf
		var a agent
		found, err := getJSON(ctx, tx, key, &a)
		if err != nil || (found && !v.newerThan(a.Version)) {
			return change{superseded: true}, err
		}
		next := agent{ID: u.ID, Name: u.Name, Role: u.Role, Status: st.Status, StatusName: userStatusName(st.Status, st.StatusName),
			Preference: st.Preference, PreferenceName: st.PreferenceName, Updated: v.Time, Version: v}
		return change{line: line(next), write: s.putAgent(key, next)}, nil
	}, nil
}

func (s *store) putAgent(key string, a agent) func(context.Context, redis.Pipeliner) {
	return func(ctx context.Context, p redis.Pipeliner) {
		p.Set(ctx, key, mustJSON(a), 0)
		p.SAdd(ctx, s.key("agents"), itoa(a.ID))
	}
}

func (s *store) planCall(c events.Call, verb string, v version) ([]string, planner, error) {
	key := s.key("call", c.ID)
	return []string{key}, func(ctx context.Context, tx *redis.Tx, resendOf uint64) (change, error) {
		v.ResendOf = resendOf
		var cur call
		found, err := getJSON(ctx, tx, key, &cur)
		if err != nil || (found && (cur.Ended || !v.newerThan(cur.Version))) {
			return change{superseded: true}, err
		}
		next := call{ID: c.ID, Direction: string(c.Direction), Queue: deref(c.AssignedCallQueueName), Agent: deref(c.AssignedAgentName),
			Created: c.CreatedTime, Updated: v.Time, Version: v}
		line := fmt.Sprintf("call %d %s: %s", c.ID, verb, next.Direction)
		if next.Queue != "" {
			line += " via " + next.Queue
		}
		return change{line: line, write: func(ctx context.Context, p redis.Pipeliner) {
			p.Set(ctx, key, mustJSON(next), 0)
			p.SAdd(ctx, s.key("calls"), itoa(c.ID))
		}}, nil
	}, nil
}

func (s *store) planCallEnded(c events.Call, v version) ([]string, planner, error) {
	key, members := s.key("call", c.ID), s.key("call", c.ID, "participants")
	return []string{key, members}, func(ctx context.Context, tx *redis.Tx, resendOf uint64) (change, error) {
		v.ResendOf = resendOf
		var cur call
		found, err := getJSON(ctx, tx, key, &cur)
		if err != nil || (found && (cur.Ended || !v.newerThan(cur.Version))) {
			return change{superseded: true}, err
		}
		ids, err := tx.SMembers(ctx, members).Result()
		if err != nil {
			return change{}, err
		}
		gone := call{ID: c.ID, Ended: true, Updated: v.Time, Version: v}
		return change{line: fmt.Sprintf("call %d ended: %d participants, billed %ds", c.ID, len(c.Participants), c.BillDuration),
			write: func(ctx context.Context, p redis.Pipeliner) {
				p.Set(ctx, key, mustJSON(gone), endedMemory) // a tombstone: late events do not reopen it
				p.SRem(ctx, s.key("calls"), itoa(c.ID))
				for _, id := range ids {
					p.Del(ctx, s.key("participant", c.ID, id))
				}
				p.Del(ctx, members)
			}}, nil
	}, nil
}

func (s *store) planParticipant(callID int64, ep events.Participant, v version) ([]string, planner, error) {
	callKey, key := s.key("call", callID), s.key("participant", callID, ep.ID)
	return []string{callKey, key}, func(ctx context.Context, tx *redis.Tx, resendOf uint64) (change, error) {
		v.ResendOf = resendOf
		var c call
		if found, err := getJSON(ctx, tx, callKey, &c); err != nil || (found && c.Ended) {
			return change{superseded: true}, err
		}
		var old participant
		found, err := getJSON(ctx, tx, key, &old)
		if err != nil || (found && !v.newerThan(old.Version)) {
			return change{superseded: true}, err
		}
		p := participant{ID: ep.ID, Type: strings.ToLower(ep.ParticipantType), ParticipantID: ep.ParticipantID,
			Status: ep.CallStatus, StatusLabel: events.CallStatusLabel(ep.CallStatus), Updated: v.Time, Version: v}
		who := fmt.Sprintf("%s %d", p.Type, p.ParticipantID)
		line := fmt.Sprintf("call %d: %s joined (%s)", callID, who, p.StatusLabel)
		if found {
			line = fmt.Sprintf("call %d: %s %s → %s", callID, who, old.StatusLabel, p.StatusLabel)
		}
		return change{line: line, write: func(ctx context.Context, pipe redis.Pipeliner) {
			pipe.Set(ctx, key, mustJSON(p), 0)
			pipe.SAdd(ctx, s.key("call", callID, "participants"), itoa(p.ID))
			pipe.SAdd(ctx, s.key("calls"), itoa(callID)) // its call.created may come later
		}}, nil
	}, nil
}

// userStatusName is the name the event gives, or the name of the built-in status.
func userStatusName(status int, name string) string {
	if name != "" {
		return name
	}
	switch status {
	case events.UserOffline:
		return "Offline"
	case events.UserOnline:
		return "Online"
	case events.UserBusy:
		return "Busy"
	case events.UserAfterCallWork:
		return "After-call work"
	}
	return fmt.Sprintf("status %d", status)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
