package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
)

// privateInput is request data that only the service and its operators may
// read: it must never show in clear in Temporal.
const privateInput = "DE89-PRIVATE-IBAN-3704"

// TestSecretsStaySealed runs `assent dev` on SQLite and on PostgreSQL,
// makes every kind of secret the service keeps (an admin key and member
// tokens answered under an Idempotency-Key, a webhook secret and its
// rotation, a callback secret) and then looks for them in clear: in every
// file of the data directory (both SQLite databases and their WAL files)
// and in a dump of the PostgreSQL schema. On the way it checks what a
// Temporal client without the key can do: read only ciphertext, and not
// move a request.
func TestSecretsStaySealed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs assent dev twice")
	}
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	for _, kind := range testenv.Databases {
		t.Run(kind, func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), ".assent")
			temporalPort := freePort(t)
			uiOrigin := "http://127.0.0.1:" + freePort(t)
			extra := []string{"--temporal-port", temporalPort, "--temporal-ui-port", "-1", "--temporal-ui-url", uiOrigin}
			var pg string
			if kind == "postgres" {
				pg = testenv.PostgresURL(t)
				extra = append(extra, "--database-url", pg)
			}
			apiURL, _, _, stop := startDev(t, dataDir, extra...)
			stopped := false
			defer func() {
				if !stopped {
					stop()
				}
			}()
			boot, err := loadBootstrap(dataDir)
			require.NoError(t, err)

			secrets, approvalID := makeSecrets(t, apiURL, boot)
			temporalSeesCiphertext(t, "127.0.0.1:"+temporalPort, apiURL, boot, approvalID)
			operatorsDecode(t, "127.0.0.1:"+temporalPort, apiURL, uiOrigin, dataDir, pg, boot, approvalID)

			findNone(t, "data directory while running", scanDir(t, dataDir), secrets)
			stop()
			stopped = true
			files := scanDir(t, dataDir)
			findNone(t, "data directory after stopping", files, secrets)
			// Request data is the read model's to keep; Temporal keeps it
			// encrypted.
			for name, b := range files {
				if strings.HasPrefix(filepath.Base(name), "temporal.db") {
					assert.False(t, bytes.Contains(b, []byte(privateInput)), "%s holds request input in clear", name)
				}
			}
			if pg != "" {
				findNone(t, "pg_dump", pgDump(t, pg), secrets)
			}
		})
	}
}

// makeSecrets creates one of each secret through the API and returns them,
// with the id of an approval whose input holds privateInput.
func makeSecrets(t *testing.T, apiURL string, boot *bootstrap) (secrets []string, approvalID string) {
	t.Helper()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(receiver.Close)
	call := func(path, key, body string, into any) {
		t.Helper()
		status := postJSONWithKey(t, apiURL+path, boot.AdminKey, "once-"+key, body, into)
		require.Equal(t, http.StatusCreated, status, "%s: %v", path, into)
	}
	var adminKey, token, own struct{ Key, Token string }
	call("/api/v1/admin/keys", "k1", `{"name":"ci","kind":"admin"}`, &adminKey)
	// An admin key mints a member a token that reads; the owner mints her own.
	call("/api/v1/admin/members/"+demoMember(t, boot, "member").ID+"/tokens", "k2", `{}`, &token)
	require.Equal(t, http.StatusCreated, postJSONWithKey(t, apiURL+"/api/v1/me/tokens", demoMember(t, boot, "owner").Token, "once-k6", `{}`, &own))
	var hook struct{ ID, Secret string }
	call("/api/v1/admin/webhooks", "k3", `{"url":"`+receiver.URL+`/hook","events":["approval.approved"]}`, &hook)
	var rotated struct{ Secret string }
	status := postJSONWithKey(t, apiURL+"/api/v1/admin/webhooks/"+hook.ID+"/rotate-secret", boot.AdminKey, "once-k4", `{}`, &rotated)
	require.Equal(t, http.StatusOK, status)

	var approval struct{ ID, CallbackSecret string }
	status = postJSONWithKey(t, apiURL+"/api/v1/approvals", boot.AgentKey, "once-k5",
		`{"title":"Pay the supplier","input":{"iban":"`+privateInput+`"},"callbackUrl":"`+receiver.URL+`/cb"}`, &approval)
	require.Equal(t, http.StatusCreated, status)

	secrets = []string{adminKey.Key, token.Token, own.Token, hook.Secret, rotated.Secret, approval.CallbackSecret}
	for _, s := range secrets {
		require.NotEmpty(t, s, "every secret was shown once: %v", secrets)
	}
	return secrets, approval.ID
}

// temporalSeesCiphertext checks what a client that reaches Temporal without
// the key gets: ciphertext in the history, and a refused Update.
func temporalSeesCiphertext(t *testing.T, temporalAddr, apiURL string, boot *bootstrap, approvalID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: "default"})
	require.NoError(t, err)
	defer c.Close()
	wid := approvals.WorkflowID(approvalID)

	start := historyOf(ctx, t, c, wid)[0].GetWorkflowExecutionStartedEventAttributes()
	require.NotNil(t, start)
	for _, p := range start.GetInput().GetPayloads() {
		assert.Equal(t, "binary/encrypted", string(p.GetMetadata()["encoding"]))
	}

	// A forged decision, naming the organisation's administrator.
	admin := demoMember(t, boot, "admin")
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: wid, UpdateName: approvals.UpdateDecide,
		Args:         []any{approvals.DecideRequest{ActorID: admin.ID, ActorName: admin.Name, Decision: approvals.DecisionApprove, Note: "forged"}},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	require.Error(t, err, "an Update without the key is refused")

	var a struct{ Status string }
	require.Equal(t, http.StatusOK, getJSON(t, apiURL+"/api/v1/approvals/"+approvalID, boot.AgentKey, &a))
	assert.Equal(t, "pending", a.Status, "the forged Update changed nothing")

	raw, err := proto.Marshal(&historypb.History{Events: historyOf(ctx, t, c, wid)})
	require.NoError(t, err)
	assert.NotContains(t, string(raw), privateInput, "the history holds ciphertext only")
	assert.NotContains(t, string(raw), "forged")
}

// operatorsDecode checks the Temporal UI's codec endpoint: payloads in
// clear for a signed-in operator, for nobody else.
func operatorsDecode(t *testing.T, temporalAddr, apiURL, uiOrigin, dataDir, pg string, boot *bootstrap, approvalID string) {
	t.Helper()
	ctx := context.Background()
	dsn := pg
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(dataDir, "assent.db")
	}
	db, err := models.Open(dsn)
	require.NoError(t, err)
	defer models.Close(db)
	keys, err := secretkey.LoadOrCreate(filepath.Join(dataDir, config.SecretKeyFile))
	require.NoError(t, err)
	store := models.NewStore(db, keys)
	session := func(role string) string {
		_, token, err := accounts.New(store).CreateSession(ctx, boot.OrganizationID, demoMember(t, boot, role).ID)
		require.NoError(t, err)
		return token
	}

	// The payloads the UI would send: the approval's workflow input.
	c, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: "default"})
	require.NoError(t, err)
	defer c.Close()
	input := historyOf(ctx, t, c, approvals.WorkflowID(approvalID))[0].GetWorkflowExecutionStartedEventAttributes().GetInput()
	body, err := protojson.Marshal(input)
	require.NoError(t, err)

	decode := func(origin, sessionToken string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, apiURL+web.CodecPath+"/decode", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Namespace", "default")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if sessionToken != "" {
			req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: sessionToken})
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	assert.Equal(t, http.StatusUnauthorized, decode(uiOrigin, "").StatusCode, "signed out")
	assert.Equal(t, http.StatusForbidden, decode(uiOrigin, session("member")).StatusCode, "a member who is not an operator")
	assert.Equal(t, http.StatusForbidden, decode("http://evil.example", session("owner")).StatusCode, "another origin")

	resp := decode(uiOrigin, session("owner"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, uiOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var decoded commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(out, &decoded))
	require.NotEmpty(t, decoded.GetPayloads())
	assert.Contains(t, string(decoded.GetPayloads()[0].GetData()), privateInput, "the operator reads the payload in clear")

	preflight, _ := http.NewRequest(http.MethodOptions, apiURL+web.CodecPath+"/decode", nil)
	preflight.Header.Set("Origin", uiOrigin)
	preflight.Header.Set("Access-Control-Request-Method", "POST")
	presp, err := http.DefaultClient.Do(preflight)
	require.NoError(t, err)
	presp.Body.Close()
	assert.Equal(t, http.StatusNoContent, presp.StatusCode)
	assert.Equal(t, uiOrigin, presp.Header.Get("Access-Control-Allow-Origin"))

	encode, _ := http.NewRequest(http.MethodPost, apiURL+web.CodecPath+"/encode", bytes.NewReader(body))
	encode.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: session("owner")})
	eresp, err := http.DefaultClient.Do(encode)
	require.NoError(t, err)
	eresp.Body.Close()
	assert.Equal(t, http.StatusNotFound, eresp.StatusCode, "nobody may have payloads encrypted through the endpoint")
}

func historyOf(ctx context.Context, t *testing.T, c client.Client, wid string) []*historypb.HistoryEvent {
	t.Helper()
	var events []*historypb.HistoryEvent
	iter := c.GetWorkflowHistory(ctx, wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		events = append(events, e)
	}
	require.NotEmpty(t, events)
	return events
}

// scanDir reads every file under dir.
func scanDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			files[path] = b
		}
		return nil // a WAL file may vanish between the walk and the read
	}))
	var names []string
	for name := range files {
		names = append(names, filepath.Base(name))
	}
	require.Contains(t, names, "temporal.db", "the scan reads Temporal's database too")
	return files
}

// pgDump dumps the schema dsn points at, as an operator's backup would.
func pgDump(t *testing.T, dsn string) map[string][]byte {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	schema := u.Query().Get("search_path")
	require.NotEmpty(t, schema)
	pass, _ := u.User.Password()
	cmd := exec.Command("pg_dump", "-h", u.Hostname(), "-p", u.Port(), "-U", u.User.Username(),
		"-d", strings.TrimPrefix(u.Path, "/"), "-n", schema, "--data-only", "--inserts")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+pass)
	out, err := cmd.Output()
	require.NoError(t, err, "pg_dump")
	require.Contains(t, string(out), "INSERT INTO "+schema+".webhook_endpoints", "the dump holds the rows")
	return map[string][]byte{"pg_dump": out}
}

// findNone fails for each secret found in clear in files.
func findNone(t *testing.T, where string, files map[string][]byte, secrets []string) {
	t.Helper()
	for name, b := range files {
		for _, s := range secrets {
			assert.False(t, bytes.Contains(b, []byte(s)), "%s: %s holds %q in clear", where, name, s)
		}
	}
}
