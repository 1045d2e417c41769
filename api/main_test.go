package api_test

import (
	"os"
	"testing"

	"github.com/assent-hq/assent/internal/testenv"
)

// Four at once: this package's tests mostly wait on Temporal's round
// trips, and at one per core kept one of two cores busy.
func TestMain(m *testing.M) {
	testenv.DefaultParallel(4)
	os.Exit(m.Run())
}
