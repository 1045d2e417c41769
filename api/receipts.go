package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/receipts"
	"github.com/assent-hq/assent/wire"
)

// receiptConflict is a refusal that carries a receipt: this one, recorded
// as a mismatch (input_mismatch, a wire.Receipt), or the token's receipt
// (receipt_exists, a wire.RecordedReceipt: its id and times only).
type receiptConflict struct {
	Error   *apperr.Error `json:"error"`
	Receipt any           `json:"receipt"`
}

// reportReceipt answers 201 with the receipt, or 409 with the error and
// the receipt it concerns.
func (h *handlers) reportReceipt(c *gin.Context) {
	var in receipts.ReportInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, err := h.receipts.Report(c.Request.Context(), Principal(c), &in, Claim(c))
	if e, ok := apperr.As(err); ok && r != nil {
		var shown any = wire.NewReceipt(r)
		if e.Code == apperr.ReceiptExists {
			shown = wire.NewRecordedReceipt(r)
		}
		c.JSON(e.Status(), receiptConflict{Error: e, Receipt: shown})
		return
	}
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewReceipt(r))
}
