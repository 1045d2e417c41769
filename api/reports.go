package api

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/reporttemplates"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/wire"
)

// ReportBodyLimit bounds the JSON body of a publish: 2 MB of HTML may
// grow sixfold when escaped (\u00XX), and is then held to 2 MB decoded.
const ReportBodyLimit = 12 << 20

// upload is an upload ticket as created.
type upload struct {
	UploadID  string        `json:"uploadId"`
	UploadURL string        `json:"uploadUrl"`
	ExpiresAt wiretime.Time `json:"expiresAt"`
}

func (h *handlers) createUpload(c *gin.Context) {
	u, uploadURL, err := h.reports.CreateUpload(c.Request.Context(), Principal(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, upload{UploadID: u.ID, UploadURL: uploadURL, ExpiresAt: wiretime.New(u.ExpiresAt)})
}

// receiveUpload takes the bytes of an upload; the ticket in the path is
// the only credential, so no Authorization header is read.
func (h *handlers) receiveUpload(c *gin.Context) {
	_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(reports.UploadTimeout))
	u, err := h.reports.Receive(c.Request.Context(), c.Param("ticket"), c.GetHeader("Content-Type"), c.Request.Body)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"uploadId": u.ID, "contentType": u.ContentType, "bytes": u.Size})
}

func (h *handlers) createReport(c *gin.Context) {
	var in reports.CreateInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, v, err := h.reports.Create(c.Request.Context(), Principal(c), &in, Claim(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/reports/"+r.ID)
	c.JSON(http.StatusCreated, wire.NewReport(r, v, h.baseURL))
}

func (h *handlers) listReports(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	f := reports.Filter{FlowID: c.Query("flowId")}
	if f.Archived, err = BoolParam(c, "archived"); err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.reports.List(c.Request.Context(), Principal(c), f, p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, func(r *reports.Report) wire.Report { return wire.NewReport(r, nil, h.baseURL) }))
}

func (h *handlers) getReport(c *gin.Context) {
	r, err := h.reports.Visible(c.Request.Context(), Principal(c), reportParam(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewReport(r, nil, h.baseURL))
}

// versionList is a report's versions, newest first.
type versionList struct {
	Data          []wire.Version `json:"data"`
	LatestVersion int            `json:"latestVersion"`
	LiveVersion   *int           `json:"liveVersion"`
}

func (h *handlers) listVersions(c *gin.Context) {
	r, vs, err := h.reports.Versions(c.Request.Context(), Principal(c), reportParam(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, versionList{LatestVersion: r.LatestVersion, LiveVersion: r.LiveVersion,
		Data: wire.All(vs, func(v *reports.Version) wire.Version { return wire.NewVersion(r, v) })})
}

func (h *handlers) publishVersion(c *gin.Context) {
	var in reports.VersionInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, v, err := h.reports.Publish(c.Request.Context(), Principal(c), reportParam(c), &in, Claim(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewReport(r, v, h.baseURL))
}

func (h *handlers) rollbackReport(c *gin.Context) {
	var in reports.RollbackInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, v, err := h.reports.Rollback(c.Request.Context(), OrgID(c), Principal(c), reportParam(c), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewReport(r, v, h.baseURL))
}

func (h *handlers) archiveReport(c *gin.Context) {
	var in reports.ArchiveInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, err := h.reports.Archive(c.Request.Context(), Principal(c), reportParam(c), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewReport(r, nil, h.baseURL))
}

func (h *handlers) listHeldVersions(c *gin.Context) {
	held, err := h.reports.Held(c.Request.Context(), OrgID(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(held, "", func(x *reports.HeldVersion) wire.Report { return wire.NewReport(x.Report, &x.Version, h.baseURL) }))
}

func (h *handlers) releaseHeld(c *gin.Context) { h.decideHeld(c, true) }

func (h *handlers) declineHeld(c *gin.Context) { h.decideHeld(c, false) }

func (h *handlers) decideHeld(c *gin.Context, release bool) {
	r, v, err := h.reports.DecideHeld(c.Request.Context(), Principal(c), OrgID(c), c.Param("id"), release, Claim(c).UpdateID())
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewReport(r, v, h.baseURL))
}

// reportParam is the report named in the path: an id or a slug, whose
// slashes may come percent-encoded (team%2Fq3) or as they are (see
// unencodedSlug).
func reportParam(c *gin.Context) string { return c.Param("idOrSlug") }

// unencodedSlug rewrites a path whose report slug keeps its slashes
// unencoded, /api/v1/reports/team/q3/versions, to the route's form,
// /api/v1/reports/team%2Fq3/versions, and reports whether it did. A
// slug's segments are never an action's name (reports.Actions), so the
// first segment that is one ends the slug.
func unencodedSlug(u *url.URL) bool {
	const prefix = "/api/v1/reports/"
	rest, ok := strings.CutPrefix(u.EscapedPath(), prefix)
	if !ok {
		return false
	}
	segs := strings.Split(rest, "/")
	end := len(segs)
	for i := 1; i < len(segs); i++ {
		if slices.Contains(reports.Actions, segs[i]) {
			end = i
			break
		}
	}
	if end < 2 {
		return false
	}
	raw := prefix + strings.Join(append([]string{strings.Join(segs[:end], "%2F")}, segs[end:]...), "/")
	p, err := url.PathUnescape(raw)
	if err != nil {
		return false
	}
	u.Path, u.RawPath = p, raw
	return true
}

func (h *handlers) copyReport(c *gin.Context) {
	var in reports.CopyInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, v, err := h.reports.Copy(c.Request.Context(), Principal(c), reportParam(c), &in, Claim(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/reports/"+r.ID)
	c.JSON(http.StatusCreated, wire.NewReport(r, v, h.baseURL))
}

// template is a built-in template on the wire.
type template struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (h *handlers) listTemplates(c *gin.Context) {
	c.JSON(http.StatusOK, wire.NewList(h.reports.Templates(), "", func(t *reporttemplates.Template) template {
		return template{ID: t.ID, Name: t.Name, Description: t.Description}
	}))
}

// updateReport changes a report's sharing settings.
func (h *handlers) updateReport(c *gin.Context) {
	var in reports.SettingsInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, removed, err := h.reports.UpdateSettings(c.Request.Context(), OrgID(c), Principal(c), reportParam(c), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	out := wire.NewReport(r, nil, h.baseURL)
	gone := wire.NewGrants(removed)
	out.RemovedGrants = &gone
	c.JSON(http.StatusOK, out)
}
