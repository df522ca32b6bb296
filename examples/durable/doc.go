// Package durable holds the tests that run the seed machines across real processes on the
// embedded store (SQLite): a pipeline killed with SIGKILL mid-run and resumed by another
// process (seed 002), an idempotency key honoured by processes that never shared memory
// (seed 001), and what the store holds at each checkpoint of seed 000, a task suspended by one
// process and completed by another. The test binary
// starts copies of itself as the processes (see child in durable_test.go).
package durable
