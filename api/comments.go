package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/wire"
)

// CommentBodyLimit bounds a comment's body: four images of 5 MB, base64.
const CommentBodyLimit = 28 << 20

func (h *handlers) postComment(c *gin.Context) {
	var in comments.PostInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	t, err := h.comments.Post(c.Request.Context(), Principal(c), c.Param("idOrSlug"), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewThread(t, h.baseURL))
}

func (h *handlers) reportComments(c *gin.Context) {
	_, threads, err := h.comments.Threads(c.Request.Context(), Principal(c), c.Param("idOrSlug"))
	h.respondThreads(c, threads, "", err)
}

func (h *handlers) openComments(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	threads, next, err := h.comments.Open(c.Request.Context(), Principal(c), p)
	h.respondThreads(c, threads, next, err)
}

func (h *handlers) respondThreads(c *gin.Context, threads []comments.Thread, next string, err error) {
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(threads, next, func(t *comments.Thread) wire.Thread { return wire.NewThread(t, h.baseURL) }))
}

func (h *handlers) resolveThread(c *gin.Context) {
	var in comments.ResolveInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	t, err := h.comments.Resolve(c.Request.Context(), Principal(c), c.Param("threadId"), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewThread(t, h.baseURL))
}

func (h *handlers) retractComment(c *gin.Context) {
	if err := h.comments.Retract(c.Request.Context(), Principal(c), c.Param("idOrSlug"), c.Param("commentId")); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// commentImage serves an image attached to a report's comment, as an
// attachment-safe image: its type was read from its bytes when stored.
func (h *handlers) commentImage(c *gin.Context) {
	img, b, err := h.comments.Image(c.Request.Context(), Principal(c), c.Param("idOrSlug"), c.Param("sha256"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Security-Policy", "default-src 'none'; sandbox")
	c.Header("Cache-Control", "private, max-age=3600")
	c.Header("Content-Length", strconv.Itoa(len(b)))
	c.Data(http.StatusOK, img.ContentType, b)
}

func (h *handlers) revisionBrief(c *gin.Context) {
	var in comments.BriefInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	b, err := h.comments.RevisionBrief(c.Request.Context(), Principal(c), c.Param("idOrSlug"), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, b)
}
