package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/wire"
)

// dataset is a dataset as listed: its name, size and last change.
type dataset struct {
	Name      string        `json:"name"`
	Bytes     int           `json:"bytes"`
	UpdatedAt wiretime.Time `json:"updatedAt"`
}

func newDataset(d *reports.Dataset) dataset {
	return dataset{Name: d.Name, Bytes: d.Bytes, UpdatedAt: wiretime.New(d.UpdatedAt)}
}

// putDataset stores the body as it came, byte for byte.
func (h *handlers) putDataset(c *gin.Context) {
	body, err := jsonBody(c)
	if err != nil {
		Fail(c, err)
		return
	}
	d, created, err := h.reports.PutDataset(c.Request.Context(), OrgID(c), Principal(c), reportParam(c), c.Param("name"), body)
	if err != nil {
		Fail(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.JSON(status, newDataset(d))
}

func (h *handlers) listDatasets(c *gin.Context) {
	ds, err := h.reports.Datasets(c.Request.Context(), Principal(c), reportParam(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(ds, "", newDataset))
}

func (h *handlers) getDataset(c *gin.Context) {
	d, err := h.reports.Dataset(c.Request.Context(), Principal(c), reportParam(c), c.Param("name"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, "application/json", d.Data)
}

func (h *handlers) deleteDataset(c *gin.Context) {
	if err := h.reports.DeleteDataset(c.Request.Context(), OrgID(c), Principal(c), reportParam(c), c.Param("name")); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
