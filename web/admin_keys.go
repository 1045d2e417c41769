package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/scopes"
)

type keysPage struct {
	adminBase
	Keys   []admin.APIKey
	Pager  pager
	Form   keyForm
	Scopes []string
	// Created is the key just made, with its secret: set only on the page
	// that answers the create, the one time the secret is shown.
	Created *createdKey
}

// NotYet reports whether no endpoint requires scope yet: the picker says
// so and does not offer it (the API still accepts it).
func (keysPage) NotYet(scope string) bool { return !scopes.IsAvailable(scope) }

// scopeSummary is a key's scopes in a few words: each resource once with
// its verbs ("approvals read/write"), the first few resources only when
// there are more (Whole false: the page then folds the full list under
// it).
type scopeSummary struct {
	Text  string
	Whole bool
}

// summaryResources is how many resources a summary names before "+N more".
const summaryResources = 3

// Summary words scopes for the keys list, in the order of scopes.All.
func (keysPage) Summary(list []string) scopeSummary {
	if len(list) == len(scopes.All) && !slices.ContainsFunc(scopes.All, func(s string) bool { return !slices.Contains(list, s) }) {
		return scopeSummary{Text: fmt.Sprintf("all %d scopes", len(list))}
	}
	ordered := slices.Clone(list)
	slices.SortStableFunc(ordered, func(a, b string) int { return rank(a) - rank(b) })
	var resources []string
	verbs := map[string][]string{}
	for _, sc := range ordered {
		res, verb, _ := strings.Cut(sc, ":")
		if _, seen := verbs[res]; !seen {
			resources = append(resources, res)
		}
		verbs[res] = append(verbs[res], verb)
	}
	if len(resources) <= summaryResources {
		return scopeSummary{Text: joinGroups(resources, verbs), Whole: true}
	}
	shown := resources[:summaryResources-1]
	more := len(list)
	for _, res := range shown {
		more -= len(verbs[res])
	}
	return scopeSummary{Text: fmt.Sprintf("%s +%d more", joinGroups(shown, verbs), more)}
}

// rank orders a scope as scopes.All does; one it does not know goes last.
func rank(scope string) int {
	if i := slices.Index(scopes.All, scope); i >= 0 {
		return i
	}
	return len(scopes.All)
}

func joinGroups(resources []string, verbs map[string][]string) string {
	parts := make([]string, len(resources))
	for i, res := range resources {
		parts[i] = strings.TrimSpace(res + " " + strings.Join(verbs[res], "/"))
	}
	return strings.Join(parts, ", ")
}

// keyForm is what was typed into the new-key form.
type keyForm struct {
	Name   string
	Scopes []string
}

// Has reports whether the form had scope ticked.
func (f keyForm) Has(scope string) bool {
	return slices.Contains(f.Scopes, scope)
}

// keyLabels name the key form's fields as the page labels them.
var keyLabels = Labels{"name": "Name", "scopes": "Scopes"}

type createdKey struct {
	Key    *admin.APIKey
	Secret string
}

func (p *Pages) adminKeys(c *gin.Context) {
	p.showKeys(c, http.StatusOK, nil, keyForm{}, nil)
}

func (p *Pages) showKeys(c *gin.Context, status int, prob *formProblem, form keyForm, created *createdKey) {
	rows, next, err := p.admin.ListKeys(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := keysPage{adminBase: base(c, "keys"), Keys: rows, Pager: newPager(c, "/admin/keys", next),
		Form: form, Scopes: scopes.All, Created: created}
	page.Problem = prob
	p.Render(c, status, "admin_keys", page)
}

// createKey issues an agent key with the ticked scopes, through the same
// service call and checks as the API. Its answer is the only page that
// shows the secret; it is not stored and no later page can show it.
func (p *Pages) createKey(c *gin.Context) {
	form := keyForm{Name: c.PostForm("name"), Scopes: c.PostFormArray("scopes")}
	in := admin.NewKey{Name: form.Name, Kind: admin.KeyAgent, Scopes: form.Scopes}
	k, secret, err := p.admin.CreateKey(c.Request.Context(), orgOf(c), CurrentPerson(c).Actor(), in)
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, keyLabels); ok {
			p.showKeys(c, status, prob, form, nil)
		}
		return
	}
	p.showKeys(c, http.StatusCreated, nil, keyForm{}, &createdKey{Key: k, Secret: secret})
}

func (p *Pages) revokeKey(c *gin.Context) {
	err := confirmed(c, "key")
	if err == nil {
		_, err = p.admin.RevokeKey(c.Request.Context(), orgOf(c), CurrentPerson(c).Actor(), c.Param("id"))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, keyLabels); ok {
			p.showKeys(c, status, prob, keyForm{}, nil)
		}
		return
	}
	Done(c, "/admin/keys", "key-revoked")
}
