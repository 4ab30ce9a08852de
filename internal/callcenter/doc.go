// Package callcenter is the typed client of the call-center REST API
// (spec/callcenter-api.md): every operation of the spec's Endpoints table, tolerant
// decoding of the drift listed in spec/api-field-notes.md, paging, the account's
// rate budget and retries.
//
// A Client talks to one account at one base URL with one API key (a secret.Value
// that goes on the wire through SetHeader only and never appears in an error, a log
// line or a panic). Every Client of an account shares one Limiter, which keeps the
// account-wide request budget (see Limiter for the algorithm). Clients are safe for
// concurrent use.
//
// The records the client returns (events.Call, events.User, events.Team,
// events.CallMetric, …) are defined once, in the public events package, because
// events carry them as their data; callcenter names them there. The types only
// the API has (pages, jobs, user statuses, requests) are defined here.
//
// Decoding is tolerant: ids and numbers arrive as numbers or strings, timestamps
// with any offset (converted to UTC), direction in any case, the earlier call form
// with fields missing, life-cycle "time_stamp" or "timestamp", unknown fields. Types
// encode back to the canonical shape of the spec with encoding/json, and top-level
// records keep the raw JSON they were decoded from in their Raw field.
//
// Tolerance has a limit: a list item that still does not decode, or breaks a
// sanity rule (no id, a date such as "0000-00-00 00:00:00", null in a time a record
// cannot do without), is left out of its page and reported (WithRejectionHook,
// Rejection) instead of failing the page; the next read of the list tries it
// again. A body over the client's bound (ErrBodyTooLarge) makes the by_time
// readers read the window in smaller pieces.
//
// The API's list quirks stay here too: CallsSince and CallMetricsSince read a
// by_time window completely whatever the list order (undocumented, and a list may
// move or reshuffle between requests), and CallsSince falls back to reading pages
// and filtering when /calls ignores by_time, remembering that for an hour.
//
// With WithRedactor, an account's data policy is applied to every record as it
// is decoded, before any caller sees it.
//
// Errors name the operation ("list calls page 3: ..."); failures reported by the
// server are *APIError (see IsNotFound, IsValidation, IsUnauthorized), requests
// refused before sending are *ValidationError.
package callcenter
