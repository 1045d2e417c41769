package reports

import "github.com/assent-hq/assent/models"

// The adapters name a report's records by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type (
	Report   = models.Report
	Version  = models.ReportVersion
	Filter   = models.ReportFilter
	Grant    = models.ReportGrant
	Dataset  = models.Dataset
	Schedule = models.Schedule
)

// MaxDatasetBytes is the largest dataset a report may hold, in bytes.
const MaxDatasetBytes = models.MaxDatasetBytes
