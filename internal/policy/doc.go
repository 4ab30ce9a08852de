// Package policy is an account's data policy: what becomes of each personal
// field of the API's records (kept, hashed with a keyed HMAC-SHA-256, masked or
// dropped) and which event types the account wants.
//
// The policy is applied to a record as soon as it is decoded (callcenter calls
// Apply through its Redactor option), before the diff: snapshots, the outbox,
// the stream, logs, traces and the status page only ever see what the policy
// leaves. A *Policy is immutable once built and safe for concurrent use; its
// counters are atomic.
//
// The hashing key never leaves the package: the policy's Version binds a
// one-way fingerprint of it (an HMAC of a fixed label), so a rotated key gives a
// new version without the version revealing anything of the key.
package policy
