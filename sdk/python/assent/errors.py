"""The SDK's one error type for what the API refused or could not answer."""

import json
from typing import Any, List, Mapping, Optional, Union

from ._generated import ERROR_CODES, ErrorCode, Receipt, RecordedReceipt

__all__ = ["AssentError", "ErrorCode", "ERROR_CODES"]


class AssentError(Exception):
    """An API call that did not succeed.

    status is the HTTP status (0 when no answer came: code network_error,
    or no_api_key before sending). code is the API's stable code (compare
    with ErrorCode), message its explanation for a person, field the
    request field at fault when there is one, candidates what a name could
    have meant. receipt is the execution receipt a 409 input_mismatch
    answers with (this one, a Receipt), or the token's receipt a 409
    receipt_exists names (a RecordedReceipt: its id and times), else None.
    """

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None,
                 candidates: Optional[List[str]] = None, headers: Optional[Mapping[str, str]] = None,
                 receipt: Optional[Union[Receipt, RecordedReceipt]] = None):
        super().__init__("%s (%s%s)" % (message, code, ", field " + field if field else ""))
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.candidates = list(candidates or [])
        self.headers = headers
        self.receipt = receipt

    @classmethod
    def from_response(cls, status: int, payload: bytes, headers: Any = None) -> "AssentError":
        try:
            body = json.loads(payload.decode("utf-8"))
            err = body["error"]
            # ReceiptConflict or ReceiptExists: {error, receipt}.
            shape = RecordedReceipt if err["code"] == ErrorCode.RECEIPT_EXISTS else Receipt
            receipt = shape.from_dict(body["receipt"]) if isinstance(body.get("receipt"), dict) else None
            return cls(status, str(err["code"]), str(err.get("message", "")), err.get("field"), err.get("candidates"), headers, receipt)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, AttributeError):
            text = payload[:200].decode("utf-8", "replace") if payload else ""
            return cls(status, "http_%d" % status, text or "HTTP %d without an error body" % status, headers=headers)

    def __repr__(self) -> str:
        return "AssentError(status=%d, code=%r, message=%r, field=%r, candidates=%r)" % (
            self.status, self.code, self.message, self.field, self.candidates)
