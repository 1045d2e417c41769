package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Receipt is an execution receipt on the wire: the answer to POST
// /api/v1/receipts (and its conflicts), the data of execution.mismatch and
// its place in an evidence export.
type Receipt struct {
	ID string `json:"id"`
	// DecisionTokenID is the token's jti: one receipt per token.
	DecisionTokenID string  `json:"decisionTokenId"`
	ApprovalID      *string `json:"approvalId"`
	GateCheckID     *string `json:"gateCheckId"`
	FlowID          *string `json:"flowId"`
	Action          *string `json:"action"`
	Outcome         string  `json:"outcome"`
	// InputMatches is false for a mismatch: input is not what the token
	// approved (approvedInputSha256).
	InputMatches        bool           `json:"inputMatches"`
	Input               models.RawJSON `json:"input"`
	InputSHA256         string         `json:"inputSha256"`
	ApprovedInputSHA256 string         `json:"approvedInputSha256"`
	Result              models.RawJSON `json:"result"`
	StartedAt           wiretime.Time  `json:"startedAt"`
	FinishedAt          wiretime.Time  `json:"finishedAt"`
	ReportedAt          wiretime.Time  `json:"reportedAt"`
	ReportedBy          string         `json:"reportedBy"`
	// DisagreesWith is set only in execution.mismatch sent for a later
	// report that says otherwise than the token's receipt: that receipt.
	DisagreesWith *string `json:"disagreesWith"`
}

// NewReceipt serializes r.
func NewReceipt(r *models.Receipt) Receipt {
	return Receipt{ID: r.ID, DecisionTokenID: r.TokenID, ApprovalID: r.ApprovalID, GateCheckID: r.GateCheckID, FlowID: r.FlowID,
		Action: r.Action, Outcome: r.Outcome, InputMatches: !r.Mismatch, Input: r.Input, InputSHA256: r.InputSHA256,
		ApprovedInputSHA256: r.ApprovedSHA256, Result: r.Result, StartedAt: wiretime.New(r.StartedAt),
		FinishedAt: wiretime.New(r.FinishedAt), ReportedAt: wiretime.New(r.CreatedAt), ReportedBy: r.ReportedBy,
		DisagreesWith: r.DisagreesWith}
}

// Execution is an approval's receipt as the approval's read shows it:
// how the run ended, without the input and result its receipt carries.
type Execution struct {
	ReceiptID    string        `json:"receiptId"`
	Outcome      string        `json:"outcome"`
	InputMatches bool          `json:"inputMatches"`
	StartedAt    wiretime.Time `json:"startedAt"`
	FinishedAt   wiretime.Time `json:"finishedAt"`
	ReportedAt   wiretime.Time `json:"reportedAt"`
}

// NewExecution serializes r as an approval's execution; nil is null.
func NewExecution(r *models.Receipt) *Execution {
	if r == nil {
		return nil
	}
	return &Execution{ReceiptID: r.ID, Outcome: r.Outcome, InputMatches: !r.Mismatch, StartedAt: wiretime.New(r.StartedAt),
		FinishedAt: wiretime.New(r.FinishedAt), ReportedAt: wiretime.New(r.CreatedAt)}
}

// RecordedReceipt is the token's receipt as receipt_exists names it: its
// id and times, never what ran nor its result, which are the executor's.
type RecordedReceipt struct {
	ID         string        `json:"id"`
	StartedAt  wiretime.Time `json:"startedAt"`
	FinishedAt wiretime.Time `json:"finishedAt"`
	ReportedAt wiretime.Time `json:"reportedAt"`
}

// NewRecordedReceipt serializes r as receipt_exists names it.
func NewRecordedReceipt(r *models.Receipt) RecordedReceipt {
	return RecordedReceipt{ID: r.ID, StartedAt: wiretime.New(r.StartedAt), FinishedAt: wiretime.New(r.FinishedAt),
		ReportedAt: wiretime.New(r.CreatedAt)}
}
