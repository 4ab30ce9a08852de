// Package poll schedules the reads of the call-center API under the account's rate
// budget and runs poll cycles: fetch → diff → one atomic commit to the store, after
// which the relay publishes the committed events. It declares the small interfaces
// it needs of the store and the relay; the adapters (cursor, publish) implement them.
package poll
