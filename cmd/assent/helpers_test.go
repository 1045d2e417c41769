package main

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/freeport"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
)

func freePort(t *testing.T) string {
	t.Helper()
	p, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	return strconv.Itoa(p)
}

// demoMember is the demo organisation's member with role.
// startDemo runs `assent dev` on a fresh data folder and returns its
// address, the demo organisation it created and that organisation's
// administrator.
func startDemo(t *testing.T) (apiURL string, boot *bootstrap, admin demoPerson, stop func()) {
	t.Helper()
	dataDir := filepath.Join(t.TempDir(), ".assent")
	apiURL, _, _, stop = startDev(t, dataDir)
	boot, err := loadBootstrap(dataDir)
	if err != nil {
		stop()
		t.Fatalf("load the demo organisation: %v", err)
	}
	return apiURL, boot, demoMember(t, boot, "admin"), stop
}

// demoMember is the demo organisation's member with role.
func demoMember(t *testing.T, boot *bootstrap, role string) demoPerson {
	t.Helper()
	for _, m := range boot.Members {
		if m.Role == role {
			return m
		}
	}
	t.Fatalf("the demo organisation has no %s", role)
	return demoPerson{}
}

// The tests that run assent as an operator would (kill -9, SIGTERM, the
// upgrade) share this checkout's binary, assentbin.For. Four run at once:
// they mostly wait on the processes and browsers they start, and at one
// per core kept a third of one core busy.
func TestMain(m *testing.M) {
	testenv.DefaultParallel(4)
	assentbin.Main(m)
}
