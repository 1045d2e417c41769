package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/wire"
)

// The organisation's model screen: its endpoint and model, its key shown
// only as set or not.

type screenPage struct {
	adminBase
	Screen wire.ModelScreen
	Form   screenForm
}

// screenForm is what was typed: not the key, which is never shown again.
type screenForm struct{ URL, Model string }

func (p *Pages) adminScreen(c *gin.Context) {
	p.showScreen(c, http.StatusOK, nil, nil)
}

func (p *Pages) showScreen(c *gin.Context, status int, prob *formProblem, form *screenForm) {
	m, err := p.admin.ModelScreen(c.Request.Context(), orgOf(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := screenPage{adminBase: base(c, "screen"), Screen: wire.NewModelScreen(m)}
	if m != nil {
		page.Form = screenForm{URL: m.URL, Model: m.Model}
	}
	if form != nil {
		page.Form = *form
	}
	page.Problem = prob
	p.Render(c, status, "admin_screen", page)
}

var screenLabels = Labels{"url": "Chat-completions endpoint", "model": "Model", "apiKey": "API key", "confirm": "Confirm"}

// saveScreen stores what the form sets through the same call and checks
// as the API: a key left empty keeps the stored one.
func (p *Pages) saveScreen(c *gin.Context) {
	form := screenForm{URL: c.PostForm("url"), Model: c.PostForm("model")}
	in := admin.ModelScreenSettings{URL: form.URL, Model: form.Model}
	if v := c.PostForm("apiKey"); v != "" {
		in.APIKey = &v
	}
	if _, err := p.admin.SaveModelScreen(c.Request.Context(), orgOf(c), CurrentPerson(c).Actor(), in); err != nil {
		if prob, status, ok := p.refusedBy(c, err, screenLabels); ok {
			p.showScreen(c, status, prob, &form)
		}
		return
	}
	Done(c, "/admin/model-screen", "screen-saved")
}

func (p *Pages) screenOff(c *gin.Context) {
	err := confirmed(c, "switch-off button")
	if err == nil {
		err = p.admin.DisableModelScreen(c.Request.Context(), orgOf(c))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, screenLabels); ok {
			p.showScreen(c, status, prob, nil)
		}
		return
	}
	Done(c, "/admin/model-screen", "screen-off")
}
