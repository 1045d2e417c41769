package evidence

import (
	"encoding/csv"
	"io"
	"strings"
)

// CSVHeader is the timeline CSV's header row, a stable contract.
var CSVHeader = []string{"at", "actor", "actorId", "action", "requestType", "requestId", "detail", "entryHash"}

// WriteCSV writes the timeline alone, one row per step, RFC 4180 quoted.
// A cell a spreadsheet would read as a formula (starting with =, +, -, @,
// a tab or a carriage return) is prefixed with a single quote.
func WriteCSV(w io.Writer, timeline []Entry) error {
	out := csv.NewWriter(w)
	out.UseCRLF = true
	if err := out.Write(CSVHeader); err != nil {
		return err
	}
	for _, e := range timeline {
		row := []string{e.At.String(), e.Actor, e.ActorID, e.Action, e.RequestType, e.RequestID, e.Detail, e.EntryHash}
		for i := range row {
			row[i] = defuse(row[i])
		}
		if err := out.Write(row); err != nil {
			return err
		}
	}
	out.Flush()
	return out.Error()
}

// defuse keeps a cell from being read as a formula.
func defuse(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}
