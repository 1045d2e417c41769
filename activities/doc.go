// Package activities holds the Temporal activities that belong to no
// request kind: deliveries, and reports' held versions, schedules and
// sends (each kind's own are in its folder). Errors that must
// not be retried are typed application errors named in one place.
package activities
