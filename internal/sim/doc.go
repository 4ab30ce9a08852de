// Package sim simulates the call-center REST API (spec/callcenter-api.md) for the
// demo, tests and benchmarks: a deterministic world of agents, teams, calls and
// metrics, served over HTTP with the spec's paths, bodies, errors and rate limits,
// plus the drift and faults the field notes describe. It implements the wire format
// on its own, independently of the API client.
//
// # Time and determinism
//
// Simulated time comes from a Clock: by default Start + Speed × real elapsed time;
// tests pass a ManualClock and call Sim.Advance. The world is a discrete-event
// simulation: a min-heap of timed actions drawn from one math/rand/v2 source seeded
// with Config.Seed. Every request (and Advance, Sync, Stats, Close) first runs every
// action due up to the clock's time, so the world at simulated time T depends only on
// the seed, the config and the API writes made before T, never on request timing.
// All world times are whole seconds, like the wire format's. Faults, drift, random
// list order and job tokens use separate sources derived from the seed, so they never
// change the world.
//
// # World
//
// Users (Config.Agents; user 1 is the Account Admin, then Admins, Supervisors and
// Agents) have a preference (a status id) that flips at random: online users take
// a break (Offline, Lunch, Training) after 40 minutes on average, offline ones come
// back (Online, Mobile) after 12; mobile_app_preference toggles every three hours or
// so. status is 2 while the user's leg rings or talks, 3 during after-call work, else
// the preference's status_type (0 offline, 1 online). Statuses are ids 0 Offline,
// 1 Online, 2 Busy, 3 After Call Work (the defaults), 4 Lunch, 5 Training (offline
// type), 6 Mobile (online/online_phone), 7 Meeting (offline, disabled).
//
// Each generated team owns a queue and a service number (every other one with an
// IVR). Calls arrive as a Poisson process (Config.CallRate per simulated minute): a
// quarter are outbound (when an Agent is free), the rest inbound. Inbound callers may
// be blocked (9), restricted (11) or fail (4) at once, be handled by a bot in the IVR
// (19), or queue (6) until a free online team member (idle longest first) is rung
// (13); the agent answers (8) or misses (3, the caller requeues or hangs up with 3);
// callers abandon (17) after their patience, or time out (queue_wait_timeout) into
// 18 or voicemail (16 then 10). Answered calls may be put on hold (12), cold- or
// warm-transferred to a child call (parent_call_id; the new agent's leg has
// connection_type 4 or 5), joined by a conference agent (6), monitored by a
// Supervisor in a child call (root_call_id, connection_type 2) who may barge in on
// the call itself (3), or dropped (5); now and then the answering agent is on an
// external number (7). Outbound calls are answered, unanswered (3), busy (2),
// failed (4) or reach voicemail.
//
// A participant's terminal statuses are 1, 2, 3, 4, 5, 9, 10, 11, 15, 17, 18 and 19
// (see Terminal); 0, 6, 8, 12, 13 and 16 are not. A call has ended when all its
// participants are terminal; its bill_duration is then set. After hang-up the agent
// does 20 to 120 seconds of after-call work (notes may be added half-way, an
// integrated resource at the end); the recording of an answered call on a recording
// number is attached 5 to 30 seconds after the end (a fifth with a recording to
// redact). A call's metric is created with the call (same created_time, durations
// zero, nullable ones null, life_cycle empty) and finalized once, 5 to 60 seconds
// after the call has ended and its after-call work is done; a fifth get a later csat
// or tags update, 2 to 30 minutes after.
//
// Config.Backlog adds historical calls, ended and finalized, created before Start
// (the last an hour before it). They take no part in routing, write no truth lines
// and never involve transfers or monitoring; 100,000 of them take about 0.1 s and
// 80 MB. Config.History adds older ones still, before the backlog, generated
// lazily: each is rebuilt from its index (its own seeded random source) whenever an
// export report needs it, so a million of them cost no memory. Only export
// reports serve them, streamed a thousand records per hold of the lock.
//
// Users and teams created or updated through the API enter the world: preference
// changes move status, deleted users get no calls and no random flips, team
// membership changes routing.
//
// # Ground truth
//
// Config.Truth receives one JSON object per line for every state change, in the
// order the world made them (time never decreases):
//
//	{"time":"2025-03-01T09:00:08Z","entity":"participant","id":10000008,"call_id":1000006,"change":"status_changed","field":"call_status","from":13,"to":6}
//
// Fields:
//
//   - time: simulated time, RFC 3339 in UTC.
//   - entity: call, participant, user, team, metric or job.
//   - id: the entity's id; call_id: the call, for participants and metrics only.
//   - change: created (call, user, team, metric, job), joined (participant; "to" is
//     its first call_status), status_changed (participant call_status; user status,
//     preference, mobile_app_preference; job status), updated (any other field
//     named in "field": call assigned_agent_id, call_notes, recording,
//     recording_to_redact (ids), integrated_resources (count), bill_duration;
//     participant enqueued_time, duration, cost; user last_seen_time,
//     last_call_time, email, role, name, phone, time_zone, language, teams (id
//     arrays), deleted (only when restored); team name, description, omni_channel,
//     users (id arrays); metric csat (object), tags (names)), ended (call: every
//     participant terminal), deleted (user marked deleted), finalized (metric, once
//     per call).
//   - from, to: old and new values (null for none); absent for created, ended,
//     deleted and finalized, and "from" absent for joined.
//
// A team created through the API writes created and, for each member, a user
// updated teams line. Backlog calls and the initial world write nothing. The log is
// buffered: Close flushes it. Writes are safe for concurrent use.
//
// # HTTP API
//
// Handler serves the 17 operations under /api/v1 (user statuses also as
// /user_statuses), plus the URLs it hands out: /recordings/{id}.mp3|.txt and
// /reports/{token}.json|.zip (no key needed, like pre-signed URLs). Decisions where
// the spec is silent:
//
//   - Order of every request's checks: rate-limit headers (on every response),
//     latency, 429, 404 for an Accept of only */* (field note 1; off with
//     Config.AllowWildcardAccept; no Accept header is fine), 401 without a known
//     X-Api-Auth, injected 5xx, then the operation.
//   - Keys belong to users: Config.APIKey to user 1 (Account Admin), each of
//     Config.Keys to a user of its role. Writes (create/update users and teams,
//     delete recording) and export need Account Admin or Admin: 403 otherwise.
//   - Errors are always {error_type, message, errors}: 401 unauthenticated, 403
//     access_denied, 404 record_not_found ("Couldn't find User with 'id'=42") or
//     not_found (unknown path), 422 model_validation_failed with errors[] of
//     {field, message}, 400 invalid_json for a body that is not a JSON object, 429
//     too_many_requests, 5xx internal_server_error.
//   - per_page defaults to 10; above 1000, or not a positive integer, is 422 (not
//     clamped); page defaults to 1. An out-of-range page is an empty list.
//   - Lists are newest first (highest id) by default; Config.Order also offers
//     oldest first and a fresh random order per request.
//   - by_time[from] (inclusive) and by_time[to] (exclusive) filter on created_time;
//     both are required together on /call_metrics, either may come alone on /calls,
//     which honours them unless Config.CallsIgnoreByTime. Times are RFC 3339 with
//     any offset (a '+' decoded as a space is restored), or without zone (UTC).
//   - include=life_cycle adds life_cycle to metrics (list and single); other
//     include values are 422.
//   - Rate limit: Config.Plan requests per fixed Config.RateWindow, account-wide;
//     every request counts, 401s and 429s included. Headers X-RateLimit-Total,
//     X-RateLimit-Remaining, X-RateLimit-Used-CurrentRequest (always 1) are on every
//     /api/v1 response. Retry-After (seconds to the window's end) per
//     Config.RetryAfter. Plan 0 is unlimited with Total 1000000.
//   - Drift (Config.Drift, per record and variant): ids as strings, "Incoming",
//     connection_type 1.0, life_cycle key "timestamp", the earlier call form, and
//     per list a missing meta. Config.OffsetRate renders a record's times with an
//     offset such as +01:00.
//   - Hostile (Config.Hostile, the "hostile" profile of HostileFaults): calls
//     served undecodable or insane (an enqueued_time "0000-00-00 00:00:00",
//     bill_duration as an object, no id, a participant updated_time null) or a
//     year ahead for their first reads, single reads of open calls answering 404,
//     /calls without meta, a participant that stops being listed, stale copies
//     with an equal updated_time, calls that never end, a call of over 3,200
//     participants (over 1 MB; BigCallLegs sets how many), and a user and a team
//     served with a rejected value for a few reads (PoisonPeople).
//   - Export jobs: started, then zip_in_progress after 2 to 10 simulated seconds,
//     then completed 5 to 30 seconds later with job_data.path (null before); a
//     Config.JobStallRate fraction stalls in zip_in_progress, a Config.JobFailRate
//     fraction ends "failed" instead of completed, and Config.Jobs scripts the
//     first jobs' outcomes. Reports are built when downloaded, from the world at
//     that time, and expire seven simulated days after completion;
//     Config.Reports poisons or lists twice some of their calls and zips them
//     oddly (ReportFaults).
package sim
