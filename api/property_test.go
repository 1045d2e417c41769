package api_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// The property run: every operation of api/openapi.yaml gets requests
// generated from its schemas, valid ones and broken ones, sent to the whole
// API in process (the router, the services, the in-process Temporal server
// and its worker: what assent dev serves, without the binary) on SQLite and
// PostgreSQL, and every answer is held to the document: never a 500, and
// only a status, headers and body the operation describes (checkContract).
//
// ASSENT_PROPERTY_RUNS requests per operation (propertyRuns unless set);
// the seed is random unless ASSENT_PROPERTY_SEED gives it, and every failure
// names it, so a failure replays with the same generated requests.

// propertyRuns keeps the run within about a minute per database.
const propertyRuns = 6

func TestPropertyEveryOperationAnswersAsDocumented(t *testing.T) {
	t.Parallel()
	runs := envInt(t, "ASSENT_PROPERTY_RUNS", propertyRuns)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ASSENT_PROPERTY_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "ASSENT_PROPERTY_SEED")
	}
	t.Logf("property run: seed %d, %d requests per operation (ASSENT_PROPERTY_SEED, ASSENT_PROPERTY_RUNS)", seed, runs)
	c := openAPIContract(t)
	ops := propertyOperations(t, c)
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		env := newAuthzEnv(t, db)
		foreign := foreignIDs(t, env)
		for _, op := range ops {
			t.Run(op.row.name(), func(t *testing.T) {
				h := fnv.New64a()
				h.Write([]byte(op.row.name()))
				p := &prober{env: env, op: op, seed: seed, foreign: foreign, rng: rand.New(rand.NewPCG(seed, h.Sum64()))}
				for i := range runs {
					p.probe(t, i)
				}
			})
		}
	})
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, name)
	return n
}

// propertyOp is one operation of the document with a valid request of it:
// the authorisation matrix's row (its body and the resource its path
// names) and the principal allowed to send it.
type propertyOp struct {
	row     authzRow
	op      *openapi3.Operation
	params  openapi3.Parameters // the path's and the operation's
	allowed string
}

// Operations outside the matrix's prefixes, with the resources they name.
const (
	anUpload matrixResource = 1000 + iota // an upload's ticket
)

const everyoneAnon = "anon=200 agent=200 noscope=200 members=200 adminkey=200 guest=200 others=200"

var propertyExtraRows = []authzRow{
	{"GET", "/healthz", "", noID, ``, everyoneAnon},
	{"GET", "/readyz", "", noID, ``, everyoneAnon},
	{"GET", "/metrics", "", noID, ``, everyoneAnon},
	{"PUT", "/uploads/:ticket", "", anUpload, `<h1>Q3</h1>`, everyoneAnon},
	{"POST", "/integrations/slack/interactions", "", noID, `payload=%7B%7D`, everyoneAnon},
}

// propertyOperations pairs every operation of the document with its row;
// an operation without one fails the test, so a new route is generated for
// as soon as it has its matrix row.
func propertyOperations(t *testing.T, c *contract) []propertyOp {
	var out []propertyOp
	rows := append(slices.Clone(authzMatrix), propertyExtraRows...)
	for _, path := range c.doc.Paths.InMatchingOrder() {
		item := c.doc.Paths.Value(path)
		for method, op := range item.Operations() {
			i := slices.IndexFunc(rows, func(r authzRow) bool {
				return r.method == method && ginParam.ReplaceAllString(r.path, "{$1}") == path
			})
			if i < 0 {
				t.Errorf("%s %s has no row in authzMatrix or propertyExtraRows", method, path)
				continue
			}
			row := rows[i]
			want, err := parseWant(row.want)
			require.NoError(t, err)
			allowed := "anon"
			for _, p := range matrixPrincipals {
				if want[p].Fresh < 300 {
					allowed = p
					break
				}
			}
			out = append(out, propertyOp{row: row, op: op, params: append(slices.Clone(item.Parameters), op.Parameters...), allowed: allowed})
		}
	}
	slices.SortFunc(out, func(a, b propertyOp) int { return strings.Compare(a.row.name(), b.row.name()) })
	return out
}

// foreignIDs are records of the other organisation, by id prefix, for
// paths and bodies to name.
func foreignIDs(t *testing.T, e *authzEnv) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range []struct{ key, path, body string }{
		{e.otherAgent, "/api/v1/approvals", `{"title":"Theirs"}`},
		{e.otherAgent, "/api/v1/flows", `{"title":"Theirs"}`},
		{e.otherAgent, "/api/v1/collections", `{"title":"Theirs","questions":[{"prompt":"Budget?","kind":"number"}],"respondents":["everyone"]}`},
		{e.otherAgent, "/api/v1/reports", `{"title":"Theirs","content":"<h1>T</h1>"}`},
		{e.otherAdmin, "/api/v1/admin/members", `{"email":"zed@other.example"}`},
		{e.otherAdmin, "/api/v1/admin/teams", `{"name":"Theirs","kind":"team"}`},
		{e.otherAdmin, "/api/v1/admin/keys", `{"name":"theirs","kind":"agent","scopes":["flows:read"]}`},
		{e.otherAdmin, "/api/v1/admin/actions", `{"name":"theirs","inputSchema":{"type":"object"}}`},
		{e.otherAdmin, "/api/v1/admin/webhooks", `{"url":"` + e.receiver + `"}`},
	} {
		r := e.do(t, "POST", c.path, c.key, c.body, nil)
		require.Equal(t, 201, r.status, "%s: %s", c.path, r.body)
		id := r.decoded["id"].(string)
		prefix, _, _ := strings.Cut(id, "_")
		out[prefix] = id
	}
	return out
}

// prober sends one operation's generated requests.
type prober struct {
	env     *authzEnv
	op      propertyOp
	seed    uint64
	rng     *rand.Rand
	foreign map[string]string
	tg      *target // the resource, kept until a request changes it
}

// sent is one generated request, and what it was made to be.
type sent struct {
	method, path, query string
	header              http.Header
	body                []byte
	what                []string
}

func (p *prober) probe(t *testing.T, i int) {
	row := p.op.row
	if p.tg == nil {
		tg := p.fresh(t)
		p.tg = &tg
	}
	s := &sent{method: row.method, header: http.Header{}}
	p.credentials(s)
	p.path(s)
	p.queryParams(s)
	if row.method != "GET" && row.method != "DELETE" || row.body != "" {
		p.requestBody(s)
	}
	if row.method == "POST" && p.chance(0.4) {
		s.header.Set("Idempotency-Key", p.oneOf("k-"+strconv.FormatUint(p.rng.Uint64(), 36), strings.Repeat("k", 256), "clé", " "))
		s.what = append(s.what, "Idempotency-Key "+s.header.Get("Idempotency-Key"))
	}
	r := p.send(t, s)
	if r.status < 300 && row.method != "GET" {
		p.tg = nil // it changed: the next request gets a fresh one
		p.disableRules(t)
	}
}

// disableRules turns off every organisation rule a request left on: one
// needing two approvals would hold for every later operation's requests,
// refusing the approvals their resources are made of.
func (p *prober) disableRules(t *testing.T) {
	if !strings.HasPrefix(p.op.row.path, "/api/v1/admin/rules") {
		return
	}
	on, err := p.env.store.EnabledRules(p.env.ctx, p.env.org.ID)
	require.NoError(t, err)
	for _, r := range on {
		_, err := p.env.store.SetRuleEnabled(p.env.ctx, p.env.org.ID, r.ID, false)
		require.NoError(t, err)
	}
}

func (p *prober) fresh(t *testing.T) target {
	if p.op.row.id != anUpload {
		return p.env.fresh(t, p.op.row)
	}
	r := p.env.do(t, "POST", "/api/v1/uploads", p.env.exact[rw], "", nil)
	require.Equal(t, 201, r.status, string(r.body))
	u, err := url.Parse(r.decoded["uploadUrl"].(string))
	require.NoError(t, err)
	return target{id: strings.TrimPrefix(u.Path, "/uploads/"), body: p.op.row.body}
}

func (p *prober) chance(f float64) bool { return p.rng.Float64() < f }

func (p *prober) oneOf(s ...string) string { return s[p.rng.IntN(len(s))] }

// credentials: mostly the allowed principal; else any principal of the
// matrix, or credentials that are not any.
func (p *prober) credentials(s *sent) {
	who := p.op.allowed
	switch x := p.rng.Float64(); {
	case x < 0.2:
		who = matrixPrincipals[p.rng.IntN(len(matrixPrincipals))]
	case x < 0.3:
		bogus := p.oneOf("Bearer asnt_agent_"+strconv.FormatUint(p.rng.Uint64(), 36), "Bearer ", "Basic dXNlcjpwYXNz",
			"Bearer asnt_admin_é", "bearer", "Bearer "+strings.Repeat("x", 9000))
		s.header.Set("Authorization", bogus)
		s.what = append(s.what, "Authorization "+truncate(bogus, 40))
		return
	}
	key, headers := p.env.credentials(p.op.row, who)
	if key != "" {
		s.header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range headers {
		s.header.Set(k, v)
	}
	s.what = append(s.what, "as "+who)
}

// path fills the route's parameters with the resource, or with an id that
// is malformed, missing, of another kind or of another organisation.
func (p *prober) path(s *sent) {
	path := strings.ReplaceAll(p.op.row.path, datasetParam, matrixDataset)
	for k, v := range p.tg.params {
		path = strings.ReplaceAll(path, k, v)
	}
	id := p.tg.id
	if routeParam.MatchString(path) && p.chance(0.3) {
		prefix, _, _ := strings.Cut(id, "_")
		other := p.foreign[prefix]
		if other == "" {
			for _, v := range p.foreign {
				other = v
				break
			}
		}
		id = p.oneOf(prefix+"_0000000000000000000000", other, "apr_01JABCDEF0123456789ABCDEFK", url.PathEscape(randomText(p.rng, 12)),
			strings.Repeat("a", 5000), "%00", "%FF", "..", "%2e%2e", "a%2Fb", "%20", "\u00e9", "-1", "0", "null")
		s.what = append(s.what, "path id "+truncate(id, 40))
	}
	s.path = routeParam.ReplaceAllLiteralString(path, id)
}

// queryParams sets some of the operation's query parameters, valid or not,
// and now and then one it does not have.
func (p *prober) queryParams(s *sent) {
	q := url.Values{}
	for _, ref := range p.op.params {
		param := ref.Value
		if param.In != "query" || !p.chance(0.5) {
			continue
		}
		var v string
		if p.chance(0.5) {
			v = p.validParam(param)
		} else {
			v = p.oneOf("", "abc", "-1", "0", "100000", "1.5", "9999999999999999999999", "\x00", "\xff",
				strings.Repeat("z", 10000), "true", "[]", "60m", "1h", "%")
		}
		q.Add(param.Name, v)
		if p.chance(0.1) {
			q.Add(param.Name, v) // twice
		}
	}
	if p.chance(0.1) {
		q.Set(p.oneOf("nope", "limit", "cursor", "status", "wait"), p.oneOf("x", "\x00", "-5"))
	}
	if len(q) > 0 {
		s.query = q.Encode()
		s.what = append(s.what, "query "+truncate(s.query, 80))
	}
}

func (p *prober) validParam(param *openapi3.Parameter) string {
	if param.Name == "wait" {
		return p.oneOf("0s", "1s", "0", "1") // no long poll holds the run
	}
	switch v := generate(p.rng, param.Schema.Value, 0).(type) {
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// requestBody is the row's valid body, with optional fields the schema
// allows, or that body broken one way.
func (p *prober) requestBody(s *sent) {
	if p.op.row.id == anUpload || strings.HasPrefix(p.op.row.path, "/integrations/") {
		p.otherBody(s)
		return
	}
	s.header.Set("Content-Type", "application/json")
	var schema *openapi3.Schema
	if rb := p.op.op.RequestBody; rb != nil {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			schema = mt.Schema.Value
		}
	}
	var v any = map[string]any{}
	if p.tg.body != "" {
		d := json.NewDecoder(strings.NewReader(p.tg.body))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			panic(fmt.Sprintf("the row's body %s: %v", p.tg.body, err))
		}
	}
	switch x := p.rng.Float64(); {
	case x < 0.3:
		if schema != nil && p.chance(0.5) {
			addOptional(p.rng, v, schema)
			s.what = append(s.what, "valid with optional fields")
		} else {
			s.what = append(s.what, "valid")
		}
		s.body = marshalRaw(v)
	case x < 0.8:
		desc := mutate(p.rng, v, schema, p.foreign, 0)
		s.what = append(s.what, "body: "+desc)
		s.body = marshalRaw(v)
	default:
		desc, body := mutateRaw(p.rng, marshalRaw(v))
		s.what = append(s.what, "raw body: "+desc)
		s.body = body
	}
	if p.chance(0.1) {
		ct := p.oneOf("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml",
			"application/json; charset=utf-16", "application/problem+json", "application/json;;", "")
		s.header.Set("Content-Type", ct)
		s.what = append(s.what, "Content-Type "+ct)
	}
}

// otherBody is an upload's file or a Slack interaction, valid or not.
func (p *prober) otherBody(s *sent) {
	if p.op.row.id == anUpload {
		var zipped bytes.Buffer
		z := zip.NewWriter(&zipped)
		w, _ := z.Create("index.html")
		_, _ = w.Write([]byte("<h1>Q3</h1>"))
		_ = z.Close()
		bodies := map[string][]byte{"html": []byte("<h1>Q3</h1>"), "zip": zipped.Bytes(), "empty": nil,
			"not a zip": []byte("PK\x03\x04garbage"), "invalid UTF-8": []byte("<p>\xff\xfe</p>"), "NUL": []byte("<p>\x00</p>")}
		name := p.oneOf("html", "zip", "empty", "not a zip", "invalid UTF-8", "NUL")
		ct := p.oneOf("text/html", "application/zip", "application/json", "", "text/html; charset=utf-8")
		s.body = bodies[name]
		s.header.Set("Content-Type", ct)
		s.what = append(s.what, "upload "+name+" as "+ct)
		return
	}
	s.header.Set("Content-Type", p.oneOf("application/x-www-form-urlencoded", "application/json", ""))
	payload := p.oneOf(`{}`, `{"type":"block_actions","actions":[{"action_id":"approve","value":"apr_x"}]}`, "\x00", "not json", "")
	s.body = []byte(p.oneOf("payload=", "", "a=b&&c", "payload=%ZZ") + url.QueryEscape(payload))
	if p.chance(0.5) {
		s.header.Set("X-Slack-Request-Timestamp", p.oneOf(strconv.FormatInt(time.Now().Unix(), 10), "0", "abc", "-1", "99999999999999999999"))
		s.header.Set("X-Slack-Signature", p.oneOf("v0=00", "v0="+strings.Repeat("a", 64), "", "v1=x"))
	}
	s.what = append(s.what, "interaction "+truncate(string(s.body), 60))
}

// send sends s and checks the answer, reporting with all it takes to
// replay it.
func (p *prober) send(t *testing.T, s *sent) response {
	t.Helper()
	u := p.env.srv.URL + s.path
	if s.query != "" {
		u += "?" + s.query
	}
	req, err := http.NewRequest(s.method, u, bytes.NewReader(s.body))
	require.NoError(t, err, u)
	req.Header = s.header.Clone()
	twin := req.Clone(req.Context())
	twin.Body = io.NopCloser(bytes.NewReader(s.body))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	r := response{status: resp.StatusCode, header: resp.Header}
	r.body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = json.Unmarshal(r.body, &r.decoded)

	rec := &recordingT{}
	if r.status >= 500 && r.status != http.StatusServiceUnavailable {
		rec.Errorf("answered %d", r.status)
	}
	p.env.checkContract(rec, twin, r)
	for _, e := range rec.errs {
		t.Errorf("%s\nrequest: %s %s (%s)\nbody: %q\nanswer %d: %s\nreplay: ASSENT_PROPERTY_SEED=%d go test -run '%s' ./api/",
			e, s.method, truncate(u, 200), strings.Join(s.what, "; "), truncate(string(s.body), 300),
			r.status, truncate(string(r.body), 300), p.seed, t.Name())
	}
	return r
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}

// Markers marshalRaw turns into bytes json.Marshal cannot write.
const (
	rawInvalidUTF8 = "\x01raw:utf8\x01"
	rawSurrogate   = "\x01raw:surrogate\x01"
	rawHugeNumber  = "\x01raw:1e400\x01"
)

func marshalRaw(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	for marker, raw := range map[string]string{rawInvalidUTF8: `"\xff\xfe"`, rawSurrogate: `"\ud800"`, rawHugeNumber: `1e400`} {
		m, _ := json.Marshal(marker)
		b = bytes.ReplaceAll(b, m, []byte(raw))
	}
	return b
}

// generate is a value schema s describes: its const, an enum's member, an
// example, or one built from its type and bounds.
func generate(r *rand.Rand, s *openapi3.Schema, depth int) any {
	switch {
	case s == nil:
		return "x"
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[r.IntN(len(s.Enum))]
	case len(s.OneOf) > 0:
		return generate(r, s.OneOf[r.IntN(len(s.OneOf))].Value, depth)
	case len(s.AnyOf) > 0:
		return generate(r, s.AnyOf[r.IntN(len(s.AnyOf))].Value, depth)
	case len(s.AllOf) > 0:
		return generate(r, s.AllOf[0].Value, depth)
	case s.Example != nil && r.IntN(2) == 0:
		return s.Example
	case len(s.Examples) > 0 && r.IntN(2) == 0:
		return s.Examples[r.IntN(len(s.Examples))]
	}
	var types []string
	if s.Type != nil {
		// A copy: DeleteFunc zeroes the tail of the slice it is given, and
		// this one is the document's, which the contract check reads after.
		types = slices.DeleteFunc(slices.Clone(s.Type.Slice()), func(t string) bool { return t == "null" })
	}
	typ := "string"
	switch {
	case len(types) > 0:
		typ = types[r.IntN(len(types))]
	case s.Properties != nil:
		typ = "object"
	case s.Items != nil:
		typ = "array"
	}
	switch typ {
	case "integer", "number":
		lo, hi := 0.0, 100.0
		if s.Min != nil {
			lo = *s.Min
		}
		if s.Max != nil {
			hi = *s.Max
		}
		if lo > hi-1 {
			hi = lo + 1
		}
		return int64(lo) + r.Int64N(int64(hi-lo)+1)
	case "boolean":
		return r.IntN(2) == 0
	case "array":
		n := int(s.MinItems) + r.IntN(3)
		if s.MaxItems != nil && n > int(*s.MaxItems) {
			n = int(*s.MaxItems)
		}
		out := []any{}
		for range n {
			var item *openapi3.Schema
			if s.Items != nil {
				item = s.Items.Value
			}
			out = append(out, generate(r, item, depth+1))
		}
		return out
	case "object":
		out := map[string]any{}
		for name, prop := range s.Properties {
			if slices.Contains(s.Required, name) || (depth < 3 && r.IntN(3) == 0) {
				out[name] = generate(r, prop.Value, depth+1)
			}
		}
		return out
	}
	switch s.Format {
	case "date-time":
		return time.Now().Add(time.Duration(r.IntN(48)+1) * time.Hour).UTC().Format(time.RFC3339)
	case "email":
		return fmt.Sprintf("p%d@example.com", r.IntN(1000))
	case "uri":
		return "https://example.com/" + strconv.Itoa(r.IntN(1000))
	}
	n := max(int(s.MinLength), 1) + r.IntN(12)
	if s.MaxLength != nil && n > int(*s.MaxLength) {
		n = int(*s.MaxLength)
	}
	return randomText(r, n)
}

func randomText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789 -é"
	rs := []rune(letters)
	var b strings.Builder
	for range n {
		b.WriteRune(rs[r.IntN(len(rs))])
	}
	return b.String()
}

// addOptional adds to an object body some fields its schema has and it
// lacks, each a value the schema allows.
func addOptional(r *rand.Rand, v any, s *openapi3.Schema) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	for name, prop := range s.Properties {
		if _, has := obj[name]; !has && r.IntN(3) == 0 && !prop.Value.ReadOnly {
			obj[name] = generate(r, prop.Value, 1)
		}
	}
}

// mutate breaks the body v in one place, a field at the top or inside,
// and says how.
func mutate(r *rand.Rand, v any, s *openapi3.Schema, foreign map[string]string, depth int) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return "unchanged (not an object)"
	}
	var keys []string
	for k := range obj {
		keys = append(keys, k)
	}
	if s != nil {
		for k := range s.Properties {
			if _, has := obj[k]; !has {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		keys = []string{"title"}
	}
	key := keys[r.IntN(len(keys))]
	var prop *openapi3.Schema
	if s != nil && s.Properties[key] != nil {
		prop = s.Properties[key].Value
	}
	// Now and then one level down, into an object the body has.
	if child, ok := obj[key].(map[string]any); ok && depth < 4 && r.IntN(3) == 0 {
		return key + "." + mutate(r, child, prop, foreign, depth+1)
	}
	if list, ok := obj[key].([]any); ok && len(list) > 0 && r.IntN(3) == 0 {
		var item *openapi3.Schema
		if prop != nil && prop.Items != nil {
			item = prop.Items.Value
		}
		if child, ok := list[0].(map[string]any); ok {
			return key + "[0]." + mutate(r, child, item, foreign, depth+1)
		}
	}
	var foreignID string
	for _, id := range foreign {
		foreignID = id
		break
	}
	mutations := []struct {
		name  string
		value func() any
	}{
		{"missing", nil},
		{"null", func() any { return nil }},
		{"a number", func() any { return 12 }},
		{"a string", func() any { return "12" }},
		{"a boolean", func() any { return true }},
		{"an array", func() any { return []any{"x"} }},
		{"an object", func() any { return map[string]any{"x": 1} }},
		{"empty", func() any { return "" }},
		{"blank", func() any { return "   " }},
		{"negative", func() any { return -1 }},
		{"zero", func() any { return 0 }},
		{"a fraction", func() any { return 1.5 }},
		{"beyond int64", func() any { return json.Number("9223372036854775808") }},
		{"beyond a double", func() any { return rawHugeNumber }},
		{"huge", func() any { return strings.Repeat("a", 70_000) }},
		{"beyond the body limit", func() any { return strings.Repeat("a", 1_100_000) }},
		{"NUL", func() any { return "a\x00b" }},
		{"not UTF-8", func() any { return rawInvalidUTF8 }},
		{"a lone surrogate", func() any { return rawSurrogate }},
		{"odd Unicode", func() any { return "\u202e🙂\u0301\ufeff" }},
		{"not in the enum", func() any { return "not-a-member" }},
		{"a bad date", func() any { return "2026-13-45T25:61:00Z" }},
		{"a bad email", func() any { return "@@" }},
		{"a bad URL", func() any { return "http://[::1" }},
		{"another organisation's id", func() any { return foreignID }},
		{"a list of another organisation's ids", func() any { return []any{foreignID} }},
		{"deeply nested", func() any { return nested(200) }},
		{"a huge list", func() any { return slices.Repeat([]any{"x"}, 10_000) }},
		{"past its maximum", func() any { return pastMax(prop) }},
	}
	m := mutations[r.IntN(len(mutations))]
	if m.value == nil {
		if s != nil && len(s.Required) > 0 {
			key = s.Required[r.IntN(len(s.Required))]
		}
		delete(obj, key)
		return key + " missing"
	}
	if r.IntN(8) == 0 {
		key = "unknown" + strconv.Itoa(r.IntN(100))
	}
	obj[key] = m.value()
	return key + " " + m.name
}

// pastMax is one more than a schema allows: a number, a string's length
// or an array's items.
func pastMax(s *openapi3.Schema) any {
	switch {
	case s == nil:
		return strings.Repeat("b", 100_000)
	case s.Max != nil:
		return *s.Max + 1
	case s.MaxLength != nil:
		return strings.Repeat("b", int(*s.MaxLength)+1)
	case s.MaxItems != nil:
		return slices.Repeat([]any{"x"}, int(*s.MaxItems)+1)
	}
	return 1 << 62
}

func nested(n int) any {
	var v any = map[string]any{}
	for i := range n {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"a": v}
		}
	}
	return v
}

// mutateRaw breaks the body's bytes: not JSON, not an object, a key
// twice, cut short, or nothing at all.
func mutateRaw(r *rand.Rand, body []byte) (string, []byte) {
	switch r.IntN(9) {
	case 0:
		return "empty", nil
	case 1:
		return "cut short", body[:len(body)/2]
	case 2:
		return "not an object", []byte([]string{`[]`, `"x"`, `null`, `1`, `true`}[r.IntN(5)])
	case 3:
		if bytes.HasPrefix(body, []byte(`{"`)) {
			end := bytes.IndexAny(body[2:], `"`) + 2
			return "a key twice", append([]byte(`{`+string(body[1:end+1])+`:1,`), body[1:]...)
		}
		return "a key twice", []byte(`{"title":"a","title":"b"}`)
	case 4:
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return "random bytes", b
	case 5:
		return "trailing data", append(slices.Clone(body), []byte(` {}`)...)
	case 6:
		return "a byte order mark", append([]byte("\xef\xbb\xbf"), body...)
	case 7:
		return "nested past the limit", []byte(strings.Repeat(`{"a":`, 500) + "1" + strings.Repeat("}", 500))
	default:
		return "whitespace", []byte(" \n\t ")
	}
}
