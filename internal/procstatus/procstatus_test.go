package procstatus_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/procstatus"
)

func TestKBReadsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	rss, ok := procstatus.KB(procstatus.Self, "VmRSS")
	assert.True(t, ok)
	assert.Positive(t, rss)
	peak, ok := procstatus.KB(procstatus.Self, "VmHWM")
	assert.True(t, ok)
	assert.GreaterOrEqual(t, peak, rss)
	_, ok = procstatus.KB(procstatus.Self, "NoSuchField")
	assert.False(t, ok)
	_, ok = procstatus.KB("0", "VmRSS")
	assert.False(t, ok)
}
