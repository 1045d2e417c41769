package web

import (
	"net/http"
	"slices"

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

// keyForm is what was typed into the new-key form.
type keyForm struct {
	Name   string
	Scopes []string
}

// Has reports whether the form had scope ticked.
func (f keyForm) Has(scope string) bool {
	return slices.Contains(f.Scopes, scope)
}

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
		if prob, status, ok := p.refusedBy(c, err); ok {
			p.showKeys(c, status, prob, form, nil)
		}
		return
	}
	p.showKeys(c, http.StatusCreated, nil, keyForm{}, &createdKey{Key: k, Secret: secret})
}

func (p *Pages) revokeKey(c *gin.Context) {
	err := confirmed(c, "key")
	if err == nil {
		_, err = p.admin.RevokeKey(c.Request.Context(), orgOf(c), c.Param("id"))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err); ok {
			p.showKeys(c, status, prob, keyForm{}, nil)
		}
		return
	}
	done(c, "/admin/keys", "key-revoked")
}
