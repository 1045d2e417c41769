// Package gen writes the Go SDK's generated.go from sdk/openapi.json: a
// struct per object schema (inline objects included), a query parameter
// struct per operation, the table of operations, one method per
// operation on its resource, and the error codes. The SDK's
// TestGenerated runs it and fails when the committed file differs
// (ASSENT_UPDATE_SDK=1 rewrites it).
package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"slices"
	"sort"
	"strings"
)

// Methods names each operation's method: the resource (a field of Client,
// or Admin.X) and the method. An operation the document has and this
// table lacks fails generation; the Unexposed ones are others' to call.
var Methods = map[string]string{
	"createApproval": "Approvals.Create", "getApproval": "Approvals.Get", "listApprovals": "Approvals.List",
	"cancelApproval": "Approvals.Cancel", "decideApproval": "Approvals.Decide", "askQuestion": "Approvals.Ask",
	"answerQuestion":   "Approvals.Answer",
	"createCollection": "Collections.Create", "getCollection": "Collections.Get", "listCollections": "Collections.List",
	"cancelCollection": "Collections.Cancel", "replyToCollection": "Collections.Reply",
	"createReview": "Reviews.Create", "getReview": "Reviews.Get", "listReviews": "Reviews.List",
	"cancelReview": "Reviews.Cancel", "reviewVerdict": "Reviews.Verdict",
	"listReportComments": "Comments.List", "listOpenComments": "Comments.Open", "postComment": "Comments.Post",
	"retractComment": "Comments.Retract", "getCommentImage": "Comments.Image", "resolveThread": "Comments.Resolve",
	"createRevisionBrief": "Comments.RevisionBrief",
	"checkGate":           "Gate.Check",
	"createReceipt":       "Receipts.Create",
	"grantMandate":        "Mandates.Grant", "listMandates": "Mandates.List", "getMandate": "Mandates.Get", "revokeMandate": "Mandates.Revoke",
	"createFlow": "Flows.Create", "getFlow": "Flows.Get", "completeFlow": "Flows.Complete", "cancelFlow": "Flows.Cancel",
	"getFlowEvidence": "Flows.Evidence",
	"createUpload":    "Reports.CreateUpload", "putUpload": "Reports.PutUpload", "createReport": "Reports.Create",
	"publishVersion": "Reports.Publish", "getReport": "Reports.Get", "listReports": "Reports.List",
	"updateReport": "Reports.Update", "listVersions": "Reports.Versions", "rollbackReport": "Reports.Rollback",
	"archiveReport": "Reports.Archive", "copyReport": "Reports.Copy", "listTemplates": "Reports.Templates",
	"shareReport": "Reports.Share", "unshareReport": "Reports.Unshare", "sendReport": "Reports.Send",
	"getReportAnalytics": "Reports.Analytics", "getOrganizationAnalytics": "Reports.OrganizationAnalytics",
	"getReportEvidence": "Reports.Evidence", "listDatasets": "Reports.Datasets", "putDataset": "Reports.PutDataset",
	"getDataset": "Reports.GetDataset", "deleteDataset": "Reports.DeleteDataset",
	"resolveAudience": "Audiences.Resolve",
	"createSchedule":  "Schedules.Create", "getSchedule": "Schedules.Get", "listSchedules": "Schedules.List",
	"deleteSchedule": "Schedules.Delete", "pauseSchedule": "Schedules.Pause", "resumeSchedule": "Schedules.Resume",
	"inbox": "Inbox.List",
	"getMe": "Me.Get", "createOwnToken": "Me.CreateToken", "listOwnTokens": "Me.ListTokens", "revokeOwnToken": "Me.RevokeToken",
	"getMyDelegation": "Me.GetDelegation", "setMyDelegation": "Me.SetDelegation", "endMyDelegation": "Me.EndDelegation",
	"healthz": "Service.Health", "readyz": "Service.Readiness", "getOpenAPI": "Service.OpenAPI",
	"getDecisionKeys": "Service.DecisionKeys", "getEvidenceKeys": "Service.EvidenceKeys",
	"getMCPResourceMetadata": "Service.MCPResourceMetadata", "getResourceMetadata": "Service.ResourceMetadata",
	"getOrganization": "Admin.Organization.Get", "updateOrganization": "Admin.Organization.Update",
	"createMember": "Admin.Members.Create", "listMembers": "Admin.Members.List", "updateMember": "Admin.Members.Update",
	"createMemberToken": "Admin.Members.CreateToken",
	"createTeam":        "Admin.Teams.Create", "listTeams": "Admin.Teams.List", "updateTeam": "Admin.Teams.Update",
	"deleteTeam":  "Admin.Teams.Delete",
	"createGuest": "Admin.Guests.Create", "listGuests": "Admin.Guests.List", "updateGuest": "Admin.Guests.Update",
	"removeGuest": "Admin.Guests.Remove",
	"createKey":   "Admin.Keys.Create", "listKeys": "Admin.Keys.List", "revokeKey": "Admin.Keys.Revoke",
	"createRule": "Admin.Rules.Create", "listRules": "Admin.Rules.List", "updateRule": "Admin.Rules.Update",
	"deleteRule":    "Admin.Rules.Delete",
	"createWebhook": "Admin.Webhooks.Create", "listWebhooks": "Admin.Webhooks.List", "getWebhook": "Admin.Webhooks.Get",
	"updateWebhook": "Admin.Webhooks.Update", "deleteWebhook": "Admin.Webhooks.Delete",
	"rotateWebhookSecret": "Admin.Webhooks.RotateSecret", "testWebhook": "Admin.Webhooks.Test",
	"listDeliveries": "Admin.Webhooks.Deliveries", "recoverDeliveries": "Admin.Webhooks.Recover",
	"getDelivery": "Admin.Deliveries.Get", "resendDelivery": "Admin.Deliveries.Resend",
	"createAction": "Admin.Actions.Create", "listActions": "Admin.Actions.List", "getAction": "Admin.Actions.Get",
	"updateAction": "Admin.Actions.Update", "deleteAction": "Admin.Actions.Delete",
	"getSlackIntegration": "Admin.Slack.Get", "putSlackIntegration": "Admin.Slack.Put",
	"deleteSlackIntegration": "Admin.Slack.Delete", "getSlackManifest": "Admin.Slack.Manifest",
	"getModelScreen": "Admin.ModelScreen.Get", "putModelScreen": "Admin.ModelScreen.Put",
	"deleteModelScreen": "Admin.ModelScreen.Delete",
	"listHeldVersions":  "Admin.HeldVersions.List", "releaseHeldVersion": "Admin.HeldVersions.Release",
	"declineHeldVersion": "Admin.HeldVersions.Decline",
}

// Unexposed operations have no method: Slack calls slackInteractions,
// Prometheus scrapes metrics.
var Unexposed = map[string]bool{"slackInteractions": true, "metrics": true}

// HandledQuery are query parameters a hand-written method sets rather than
// the caller: wait (the Wait methods) and format (Evidence is JSON,
// EvidenceCSV the CSV).
var HandledQuery = map[string]bool{"wait": true, "format": true}

// AtURL are the operations sent to a URL an earlier answer gives whole
// (putUpload: the Upload ticket's uploadUrl), without the key: the URL is
// the credential, and the instance may name it at another address than
// the client's.
var AtURL = map[string]struct{ Schema, Field string }{"putUpload": {"Upload", "uploadUrl"}}

// Renamed schemas, whose names the hand-written code takes: the SDK's
// Error is the error a call returns, with the body's fields.
var Renamed = map[string]string{"Error": "ErrorBody", "Client": "ClientBody", "Option": "OptionBody"}

func modelName(n string) string {
	if r, ok := Renamed[n]; ok {
		return r
	}
	return goName(n)
}

// ExpiringCreates get an ExpiresIn field (not sent) that becomes expiresAt,
// one day by default.
var ExpiringCreates = []string{"ApprovalCreate", "CollectionCreate", "ReviewCreate"}

type schema = map[string]any

type field struct {
	JSON, Go, Type string
	Required       bool
}

type model struct {
	Name, Doc string
	Fields    []field
}

type param struct{ Name, Go, Type string }

type op struct {
	ID, Method, Path, Resource, Name string
	PathParams                       []string
	Query                            []param
	AllQuery                         []string
	Body                             string // Go type of the body, "" for none, "[]byte" for raw
	BodyTypes                        []string
	Response                         string // Go type, "" for none, "[]byte" for raw
	Page                             string // the item type when the response is a page with a cursor
	Cursor                           string // the Go type of the page's nextCursor
}

type generator struct {
	doc     schema
	schemas schema
	models  map[string]*model
	order   []string
	ops     []op
	codes   []string
}

// Generate returns generated.go for the document.
func Generate(doc []byte) ([]byte, error) {
	g := &generator{models: map[string]*model{}}
	if err := json.Unmarshal(doc, &g.doc); err != nil {
		return nil, err
	}
	g.schemas = g.doc["components"].(schema)["schemas"].(schema)
	names := keys(g.schemas)
	for _, n := range names {
		if props, _ := g.objectProps(g.schemas[n].(schema)); props != nil {
			g.addModel(modelName(n), g.schemas[n].(schema))
		}
	}
	if err := g.operations(); err != nil {
		return nil, err
	}
	g.errorCodes()
	return g.write()
}

func keys(m schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func refName(s schema) string {
	if r, ok := s["$ref"].(string); ok {
		return r[strings.LastIndex(r, "/")+1:]
	}
	return ""
}

func (g *generator) resolve(s schema) schema {
	if n := refName(s); n != "" {
		return g.resolveRef(s["$ref"].(string))
	}
	return s
}

func (g *generator) resolveRef(ref string) schema {
	var cur any = g.doc
	for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cur = cur.(schema)[p]
	}
	return cur.(schema)
}

func types(s schema) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, x.(string))
		}
		return out
	}
	return nil
}

func nonNull(ts []string) []string {
	return slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return t == "null" })
}

func nullable(s schema) bool { return slices.Contains(types(s), "null") }

// objectProps is the properties and required names of an object schema,
// allOf merged; nil when it has none.
func (g *generator) objectProps(s schema) (schema, []string) {
	var props schema
	var req []string
	if all, ok := s["allOf"].([]any); ok {
		for _, part := range all {
			p, r := g.objectProps(g.resolve(part.(schema)))
			if p != nil {
				if props == nil {
					props = schema{}
				}
				for k, v := range p {
					props[k] = v
				}
				req = append(req, r...)
			}
		}
	}
	if p, ok := s["properties"].(schema); ok && len(p) > 0 {
		if props == nil {
			props = schema{}
		}
		for k, v := range p {
			props[k] = v
		}
		req = append(req, asList(s["required"])...)
	}
	return props, req
}

func asList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

func (g *generator) addModel(name string, s schema) string {
	if _, ok := g.models[name]; ok {
		return name
	}
	m := &model{Name: name}
	g.models[name] = m
	g.order = append(g.order, name)
	if d, ok := s["description"].(string); ok {
		m.Doc = d
	}
	props, req := g.objectProps(s)
	for _, k := range keys(props) {
		ps := props[k].(schema)
		required := slices.Contains(req, k)
		t := g.goType(ps, name, k)
		if g.isNullable(ps) || (!required && t != "string" && t != "int64" && t != "float64") {
			// A pointer where nil must differ from the zero value: null,
			// or an absent bool, time or object.
			t = optional(t)
		}
		m.Fields = append(m.Fields, field{JSON: k, Go: goName(k), Type: t, Required: required})
	}
	if slices.Contains(ExpiringCreates, name) {
		m.Fields = append(m.Fields, field{Go: "ExpiresIn", Type: "time.Duration"})
	}
	return name
}

func (g *generator) isNullable(s schema) bool {
	if nullable(s) {
		return true
	}
	if n := refName(s); n != "" {
		return nullable(g.resolve(s))
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if opts, ok := s[k].([]any); ok {
			for _, o := range opts {
				if slices.Equal(types(o.(schema)), []string{"null"}) {
					return true
				}
			}
		}
	}
	return false
}

// optional makes t a pointer unless nil already means absent.
func optional(t string) string {
	if strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "map[") || t == "any" || t == "json.RawMessage" || strings.HasPrefix(t, "*") {
		return t
	}
	return "*" + t
}

func (g *generator) goType(s schema, owner, prop string) string {
	if n := refName(s); n != "" {
		target := g.resolve(s)
		if p, _ := g.objectProps(target); p != nil {
			return g.addModel(modelName(n), target)
		}
		return g.goType(target, owner, prop)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if opts, ok := s[k].([]any); ok {
			var keep []schema
			for _, o := range opts {
				if !slices.Equal(types(o.(schema)), []string{"null"}) {
					keep = append(keep, o.(schema))
				}
			}
			if len(keep) == 1 {
				return g.goType(keep[0], owner, prop)
			}
			return "any"
		}
	}
	if _, ok := s["allOf"]; ok {
		if p, _ := g.objectProps(s); p != nil {
			return g.addModel(owner+goName(prop), s)
		}
	}
	ts := nonNull(types(s))
	if len(ts) == 0 {
		if _, ok := s["properties"]; ok {
			ts = []string{"object"}
		} else if _, ok := s["enum"]; ok {
			return "string"
		} else {
			return "any"
		}
	}
	if len(ts) > 1 {
		return "any"
	}
	switch ts[0] {
	case "string":
		if s["format"] == "date-time" {
			return "time.Time"
		}
		return "string"
	case "integer":
		return "int64"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	case "array":
		if it, ok := s["items"].(schema); ok {
			return "[]" + g.goType(it, owner, prop+"Item")
		}
		return "[]any"
	case "object":
		if p, _ := g.objectProps(s); p != nil {
			return g.addModel(owner+goName(prop), s)
		}
		if ap, ok := s["additionalProperties"].(schema); ok && len(ap) > 0 {
			return "map[string]" + g.goType(ap, owner, prop+"Value")
		}
		return "map[string]any"
	}
	return "any"
}

var initialisms = map[string]string{"id": "ID", "ids": "IDs", "url": "URL", "urls": "URLs", "api": "API", "http": "HTTP",
	"https": "HTTPS", "json": "JSON", "html": "HTML", "csv": "CSV", "jwks": "JWKS", "sha256": "SHA256", "uri": "URI", "ip": "IP"}

// goName turns a JSON or schema name into an exported Go name.
func goName(s string) string {
	var words []string
	cur := []rune{}
	rs := []rune(s)
	for i, r := range rs {
		boundary := r == '_' || r == '-' || r == '.' || r == ' ' || r == '/'
		upper := r >= 'A' && r <= 'Z'
		if boundary || (upper && i > 0 && len(cur) > 0 && !(rs[i-1] >= 'A' && rs[i-1] <= 'Z')) {
			if len(cur) > 0 {
				words = append(words, string(cur))
			}
			cur = cur[:0]
			if boundary {
				continue
			}
		}
		cur = append(cur, r)
	}
	if len(cur) > 0 {
		words = append(words, string(cur))
	}
	var b strings.Builder
	for _, w := range words {
		if i, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(i)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	out := b.String()
	if out == "" || (out[0] >= '0' && out[0] <= '9') {
		out = "X" + out
	}
	return out
}

func (g *generator) operations() error {
	paths := g.doc["paths"].(schema)
	seen := map[string]bool{}
	for _, p := range keys(paths) {
		item := paths[p].(schema)
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := item[method].(schema)
			if !ok {
				continue
			}
			id := raw["operationId"].(string)
			seen[id] = true
			if Unexposed[id] {
				continue
			}
			where, ok := Methods[id]
			if !ok {
				return fmt.Errorf("operation %s has no entry in gen.Methods", id)
			}
			dot := strings.LastIndex(where, ".")
			o := op{ID: id, Method: strings.ToUpper(method), Path: p, Resource: where[:dot], Name: where[dot+1:]}
			var params []any
			if x, ok := item["parameters"].([]any); ok {
				params = append(params, x...)
			}
			if x, ok := raw["parameters"].([]any); ok {
				params = append(params, x...)
			}
			for _, x := range params {
				prm := g.resolve(x.(schema))
				name := prm["name"].(string)
				switch prm["in"] {
				case "path":
					o.PathParams = append(o.PathParams, name)
				case "query":
					o.AllQuery = append(o.AllQuery, name)
					if !HandledQuery[name] {
						t := g.goType(prm["schema"].(schema), goName(id), name)
						if t == "bool" {
							t = "*bool"
						}
						o.Query = append(o.Query, param{Name: name, Go: goName(name), Type: t})
					}
				}
			}
			if rb, ok := raw["requestBody"].(schema); ok {
				content := g.resolve(rb)["content"].(schema)
				o.BodyTypes = append(o.BodyTypes, keys(content)...)
				if js, ok := content["application/json"].(schema); ok {
					// An empty object (cancel, pause, …) takes no argument; {} is sent.
					if refName(js["schema"].(schema)) != "Empty" {
						o.Body = g.goType(js["schema"].(schema), goName(id), "Request")
					}
				} else {
					o.Body = "[]byte"
				}
			}
			o.Response = g.response(id, raw["responses"].(schema))
			if strings.HasPrefix(o.Response, "*") && slices.Contains(o.AllQuery, "cursor") {
				m := g.models[strings.TrimPrefix(o.Response, "*")]
				for _, f := range m.Fields {
					if f.JSON == "data" && strings.HasPrefix(f.Type, "[]") {
						o.Page = strings.TrimPrefix(f.Type, "[]")
					}
					if f.JSON == "nextCursor" {
						o.Cursor = f.Type
					}
				}
			}
			g.ops = append(g.ops, o)
		}
	}
	for id := range Methods {
		if !seen[id] {
			return fmt.Errorf("gen.Methods names %s, which the document lacks", id)
		}
	}
	return nil
}

func (g *generator) response(id string, rs schema) string {
	for _, code := range keys(rs) {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		r := g.resolve(rs[code].(schema))
		content, _ := r["content"].(schema)
		if len(content) == 0 {
			continue
		}
		js, ok := content["application/json"].(schema)
		if !ok {
			return "[]byte"
		}
		s, _ := js["schema"].(schema)
		if s == nil {
			return "any"
		}
		t := g.goType(s, goName(id), "Response")
		if _, ok := g.models[t]; ok {
			return "*" + t
		}
		return t
	}
	return ""
}

// errorCodes are the codes the document names under error envelopes.
func (g *generator) errorCodes() {
	set := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case schema:
			props, _ := x["properties"].(schema)
			if e, ok := props["error"].(schema); ok {
				eprops, _ := e["properties"].(schema)
				if code, ok := eprops["code"].(schema); ok {
					if c, ok := code["const"].(string); ok {
						set[c] = true
					}
					if en, ok := code["enum"].([]any); ok {
						for _, c := range en {
							set[c.(string)] = true
						}
					}
				}
			}
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(g.doc)
	for c := range set {
		g.codes = append(g.codes, c)
	}
	sort.Strings(g.codes)
}

func comment(b *bytes.Buffer, text string) {
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		b.WriteString("// " + strings.TrimRight(line, " ") + "\n")
	}
}

func (g *generator) write() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/gen from sdk/openapi.json; DO NOT EDIT.\n\npackage assent\n\n")
	b.WriteString("import (\n\"context\"\n\"iter\"\n\"reflect\"\n\"time\"\n)\n\n")

	sort.Strings(g.order)
	for _, n := range g.order {
		m := g.models[n]
		if m.Doc != "" {
			comment(&b, n+": "+m.Doc)
		}
		fmt.Fprintf(&b, "type %s struct {\n", n)
		for _, f := range m.Fields {
			if f.JSON == "" {
				fmt.Fprintf(&b, "\t// %s, when ExpiresAt is nil, sets it to now plus this (one day when zero).\n\t%s %s `json:\"-\"`\n", f.Go, f.Go, f.Type)
				continue
			}
			tag := f.JSON
			if !f.Required {
				tag += ",omitempty"
			}
			fmt.Fprintf(&b, "\t%s %s `json:%q`\n", f.Go, f.Type, tag)
		}
		b.WriteString("}\n\n")
	}
	for _, n := range ExpiringCreates {
		fmt.Fprintf(&b, "func (b *%s) expire(now time.Time) { if b.ExpiresAt == nil { t := now.Add(orOneDay(b.ExpiresIn)); b.ExpiresAt = &t } }\n\n", n)
	}
	// Query parameter structs.
	for _, o := range g.ops {
		if len(o.Query) == 0 {
			continue
		}
		fmt.Fprintf(&b, "// %sParams are the query parameters of %s.\ntype %sParams struct {\n", goName(o.ID), o.ID, goName(o.ID))
		for _, q := range o.Query {
			fmt.Fprintf(&b, "\t%s %s `query:%q`\n", q.Go, q.Type, q.Name)
		}
		b.WriteString("}\n\n")
	}
	// The operation table.
	b.WriteString("// operations is the document's operations by operationId.\nvar operations = map[string]operation{\n")
	for _, o := range g.ops {
		fmt.Fprintf(&b, "\t%q: {Method: %q, Path: %q, PathParams: %#v, Query: %#v, BodyTypes: %#v, SDKMethod: %q},\n",
			o.ID, o.Method, o.Path, nilIfEmpty(o.PathParams), nilIfEmpty(o.AllQuery), nilIfEmpty(o.BodyTypes), o.Resource+"."+o.Name)
	}
	b.WriteString("}\n\n")
	// Schema types, for the drift test.
	b.WriteString("// schemaTypes maps each object schema of components to its type.\nvar schemaTypes = map[string]reflect.Type{\n")
	for _, n := range keys(g.schemas) {
		if _, ok := g.models[modelName(n)]; ok {
			fmt.Fprintf(&b, "\t%q: reflect.TypeFor[%s](),\n", n, modelName(n))
		}
	}
	b.WriteString("}\n\n")
	// Error codes.
	b.WriteString("// The error codes the document names.\nconst (\n")
	for _, c := range g.codes {
		fmt.Fprintf(&b, "\tCode%s ErrorCode = %q\n", goName(c), c)
	}
	b.WriteString(")\n\n// errorCodes lists them, for the drift test.\nvar errorCodes = []ErrorCode{\n")
	for _, c := range g.codes {
		fmt.Fprintf(&b, "\tCode%s,\n", goName(c))
	}
	b.WriteString("}\n\n")
	g.writeServices(&b)
	out, err := format.Source(b.Bytes())
	if err != nil {
		return b.Bytes(), fmt.Errorf("gofmt: %w", err)
	}
	return out, nil
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// writeServices writes the resource types and one method per operation.
func (g *generator) writeServices(b *bytes.Buffer) {
	resources := map[string][]op{}
	for _, o := range g.ops {
		resources[o.Resource] = append(resources[o.Resource], o)
	}
	var names []string
	for r := range resources {
		names = append(names, r)
	}
	sort.Strings(names)
	var top, admin []string
	for _, r := range names {
		typ := serviceType(r)
		fmt.Fprintf(b, "// %s holds the operations of %s.\ntype %s struct{ c *Client }\n\n", typ, r, typ)
		if strings.HasPrefix(r, "Admin.") {
			admin = append(admin, r)
		} else {
			top = append(top, r)
		}
		for _, o := range resources[r] {
			g.writeMethod(b, typ, o)
		}
	}
	b.WriteString("// Services are the client's resources.\ntype services struct {\n")
	for _, r := range top {
		fmt.Fprintf(b, "\t%s *%s\n", r, serviceType(r))
	}
	b.WriteString("\tAdmin AdminServices\n}\n\n// AdminServices are the admin API's resources (an admin key).\ntype AdminServices struct {\n")
	for _, r := range admin {
		fmt.Fprintf(b, "\t%s *%s\n", strings.TrimPrefix(r, "Admin."), serviceType(r))
	}
	b.WriteString("}\n\nfunc (c *Client) initServices() {\n")
	for _, r := range top {
		fmt.Fprintf(b, "\tc.%s = &%s{c}\n", r, serviceType(r))
	}
	for _, r := range admin {
		fmt.Fprintf(b, "\tc.%s = &%s{c}\n", r, serviceType(r))
	}
	b.WriteString("}\n")
}

func cursorExpr(t string) string {
	if t == "*string" {
		return "deref(p.NextCursor)"
	}
	return "p.NextCursor"
}

func serviceType(r string) string {
	return strings.ReplaceAll(r, ".", "") + "Service"
}

// lowerCamel lowers a Go name's leading word: IDOrSlug → idOrSlug, SHA256 → sha256.
func lowerCamel(s string) string {
	r := []rune(s)
	i := 0
	for i < len(r) && (r[i] >= 'A' && r[i] <= 'Z' || r[i] >= '0' && r[i] <= '9') {
		i++
	}
	if i > 1 && i < len(r) {
		i-- // the last capital starts the next word
	}
	return strings.ToLower(string(r[:i])) + string(r[i:])
}

func (g *generator) writeMethod(b *bytes.Buffer, typ string, o op) {
	if at, ok := AtURL[o.ID]; ok {
		g.writeAtURL(b, typ, o, modelName(at.Schema), at.Field)
		return
	}
	var args, pathArgs []string
	args = append(args, "ctx context.Context")
	for _, p := range o.PathParams {
		n := lowerCamel(goName(p))
		args = append(args, n+" string")
		pathArgs = append(pathArgs, n)
	}
	if o.Body != "" {
		bt := o.Body
		if _, ok := g.models[bt]; ok {
			bt = "*" + bt
		}
		args = append(args, "body "+bt)
	}
	query := "nil"
	if len(o.Query) > 0 {
		args = append(args, "params *"+goName(o.ID)+"Params")
		query = "queryOf(params)"
	}
	args = append(args, "opts ...CallOption")
	body := "nil"
	if o.Body != "" {
		body = "body"
	}
	pa := "nil"
	if len(pathArgs) > 0 {
		pa = "[]string{" + strings.Join(pathArgs, ", ") + "}"
	}
	fmt.Fprintf(b, "// %s calls %s (%s %s).\n", o.Name, o.ID, o.Method, o.Path)
	if o.Page != "" {
		pageName := o.Name + "Page"
		if o.Name == "List" {
			pageName = "ListPage"
		}
		fmt.Fprintf(b, "// It yields every item, page after page; %s reads one page.\n", pageName)
		fmt.Fprintf(b, "func (s *%s) %s(%s) iter.Seq2[*%s, error] {\n", typ, o.Name, strings.Join(args, ", "), o.Page)
		fmt.Fprintf(b, "\treturn pages(ctx, s.c, %q, %s, %s, func(p %s) ([]%s, string) { return p.Data, %s }, opts)\n}\n\n",
			o.ID, pa, query, o.Response, o.Page, cursorExpr(o.Cursor))
		fmt.Fprintf(b, "// %s reads one page of %s.\n", pageName, o.ID)
		fmt.Fprintf(b, "func (s *%s) %s(%s) (%s, error) {\n", typ, pageName, strings.Join(args, ", "), o.Response)
		fmt.Fprintf(b, "\tvar out %s\n\tif err := s.c.call(ctx, %q, %s, %s, %s, &out, opts); err != nil {\n\t\treturn nil, err\n\t}\n\treturn &out, nil\n}\n\n",
			strings.TrimPrefix(o.Response, "*"), o.ID, pa, query, body)
		return
	}
	switch {
	case o.Response == "":
		fmt.Fprintf(b, "func (s *%s) %s(%s) error {\n\treturn s.c.call(ctx, %q, %s, %s, %s, nil, opts)\n}\n\n",
			typ, o.Name, strings.Join(args, ", "), o.ID, pa, query, body)
	case strings.HasPrefix(o.Response, "*"):
		fmt.Fprintf(b, "func (s *%s) %s(%s) (%s, error) {\n\tvar out %s\n\tif err := s.c.call(ctx, %q, %s, %s, %s, &out, opts); err != nil {\n\t\treturn nil, err\n\t}\n\treturn &out, nil\n}\n\n",
			typ, o.Name, strings.Join(args, ", "), o.Response, strings.TrimPrefix(o.Response, "*"), o.ID, pa, query, body)
	default:
		fmt.Fprintf(b, "func (s *%s) %s(%s) (%s, error) {\n\tvar out %s\n\terr := s.c.call(ctx, %q, %s, %s, %s, &out, opts)\n\treturn out, err\n}\n\n",
			typ, o.Name, strings.Join(args, ", "), o.Response, o.Response, o.ID, pa, query, body)
	}
}

// writeAtURL writes an AtURL operation's method: it takes the answer
// holding the URL (ticket) instead of the path parameters.
func (g *generator) writeAtURL(b *bytes.Buffer, typ string, o op, schema, jsonField string) {
	field := goName(jsonField)
	if o.Body != "[]byte" || !strings.HasPrefix(o.Response, "*") {
		panic("gen: AtURL takes a raw body and answers an object: " + o.ID)
	}
	fmt.Fprintf(b, "// %s calls %s (%s %s) at ticket.%s, without the key: the URL is the credential.\n", o.Name, o.ID, o.Method, o.Path, field)
	fmt.Fprintf(b, "func (s *%s) %s(ctx context.Context, ticket *%s, body []byte, opts ...CallOption) (%s, error) {\n", typ, o.Name, schema, o.Response)
	fmt.Fprintf(b, "\tif ticket == nil || ticket.%s == \"\" {\n\t\treturn nil, &Error{Code: \"invalid_argument\", Message: %q, Field: %q}\n\t}\n",
		field, o.ID+" needs the ticket's "+jsonField, jsonField)
	fmt.Fprintf(b, "\tvar out %s\n\tif err := s.c.call(ctx, %q, nil, nil, body, &out, append(opts[:len(opts):len(opts)], atURL(ticket.%s))); err != nil {\n\t\treturn nil, err\n\t}\n\treturn &out, nil\n}\n\n",
		strings.TrimPrefix(o.Response, "*"), o.ID, field)
}
