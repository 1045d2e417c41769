// Package activities holds the Temporal activities: persistence of workflow
// transitions into the read model, deliveries and email. Errors that must
// not be retried are typed application errors named in one place.
package activities
