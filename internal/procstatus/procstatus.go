// Package procstatus reads a process's memory from Linux's
// /proc/<pid>/status, for the benchmarks and the load tool that report
// resident memory.
package procstatus

import (
	"os"
	"strconv"
	"strings"
)

// Self names the reading process.
const Self = "self"

// KB returns the named field of /proc/<pid>/status ("VmRSS", "VmHWM"), in
// kB; false where there is no such file or field (not Linux, a process
// gone).
func KB(pid, field string) (int64, bool) {
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}
