package assenttest_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	assent "github.com/assent-hq/assent/sdk/go"
	"github.com/assent-hq/assent/sdk/go/assenttest"
)

// binary skips without an assent binary unless ASSENT_REQUIRE_E2E=1.
func binary(t *testing.T) string {
	bin, err := assenttest.Binary()
	if err != nil {
		if os.Getenv("ASSENT_REQUIRE_E2E") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return bin
}

func TestStartRunsARealAssentAndStopLeavesNothing(t *testing.T) {
	binary(t)
	ctx := context.Background()
	t.Setenv("ASSENT_DATABASE_URL", "postgres://nowhere.invalid/x") // a caller's setting must not reach the server
	dev, err := assenttest.Start(ctx, assenttest.Options{})
	require.NoError(t, err)
	defer dev.Stop()

	res, err := http.Get(dev.BaseURL + "/readyz")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.NotEmpty(t, dev.OrganizationID)
	admin, ok := dev.Member("admin")
	require.True(t, ok, "%+v", dev.Members)
	_, ok = dev.Member(admin.Email)
	assert.True(t, ok)
	_, ok = dev.Member("nobody")
	assert.False(t, ok)

	me, err := assent.New(dev.BaseURL, dev.AgentKey).Me.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, dev.OrganizationID, me.Organization.ID)
	me, err = assent.New(dev.BaseURL, admin.Token).Me.Get(ctx)
	require.NoError(t, err)
	require.NotNil(t, me.Member)
	assert.Equal(t, admin.ID, me.Member.ID)

	require.NoError(t, dev.Stop())
	_, err = os.Stat(dev.DataDir)
	assert.True(t, os.IsNotExist(err), "the data folder goes with it")
	_, err = http.Get(dev.BaseURL + "/readyz")
	assert.Error(t, err, "nothing answers once stopped")
	assert.NoError(t, dev.Stop(), "a second Stop does nothing")
}

func TestStartOfSomethingElseFailsAndLeavesNothing(t *testing.T) {
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "assent-dev-*"))
	_, err := assenttest.Start(context.Background(), assenttest.Options{Binary: "/bin/false"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited before printing its address")
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "assent-dev-*"))
	assert.Equal(t, len(before), len(after), "no data folder left behind")

	_, err = assenttest.Start(context.Background(), assenttest.Options{Binary: "/nonexistent/assent"})
	assert.Error(t, err)
}
