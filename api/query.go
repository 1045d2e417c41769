package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
)

// queryParams are the query parameters each operation takes, read once
// from the contract and keyed by the route as gin names it, so a request
// looks its operation up as it is: "GET /api/v1/approvals/:id" → {wait}.
var queryParams = func() map[string]map[string]bool {
	type param struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
		In   string `json:"in"`
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]param `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		panic(fmt.Sprintf("api/openapi.yaml: %v", err)) // the tests load it
	}
	resolve := func(p param) param {
		if name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/"); ok {
			return doc.Components.Parameters[name]
		}
		return p
	}
	out := map[string]map[string]bool{}
	for path, item := range doc.Paths {
		var shared []param
		if raw, ok := item["parameters"]; ok {
			_ = json.Unmarshal(raw, &shared)
		}
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				Parameters []param `json:"parameters"`
			}
			_ = json.Unmarshal(raw, &op)
			names := map[string]bool{}
			for _, p := range append(slices.Clone(shared), op.Parameters...) {
				if p = resolve(p); p.In == "query" {
					names[p.Name] = true
				}
			}
			out[strings.ToUpper(method)+" "+routeOf(path)] = names
		}
	}
	return out
}()

// knownQuery refuses a query parameter the operation does not take,
// naming it: a typo (?stauts=pending) would otherwise be ignored, and the
// list answered unfiltered.
func knownQuery(c *gin.Context) {
	method := c.Request.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	allowed, ok := queryParams[method+" "+c.FullPath()]
	if !ok {
		c.Next()
		return
	}
	var unknown []string
	for name := range c.Request.URL.Query() {
		if !allowed[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		name := slices.Min(unknown) // the same one named each time
		takes := "no query parameters"
		if len(allowed) > 0 {
			takes = "only " + strings.Join(slices.Sorted(maps.Keys(allowed)), ", ")
		}
		Fail(c, apperr.Field(apperr.InvalidRequest, name, "unknown query parameter %q: this operation takes %s", name, takes))
		return
	}
	c.Next()
}

// routeOf is a contract path as gin's routes name it ("{id}" → ":id").
func routeOf(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if len(p) > 2 && p[0] == '{' && p[len(p)-1] == '}' {
			parts[i] = ":" + p[1:len(p)-1]
		}
	}
	return strings.Join(parts, "/")
}
