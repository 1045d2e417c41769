"""Assent's Python SDK: ask a person before an agent acts.

    import assent
    client = assent.Client()  # ASSENT_BASE_URL, ASSENT_API_KEY
    approval = client.approvals.create("Refund order 42", {"amount": 120}, editable_fields=["amount"])
    approval = client.approvals.wait(approval.id, timeout=600)
    if approval.status == "approved":
        refund(**approval.approved_input)
"""

from ._generated import ERROR_CODES, ErrorCode
from ._version import __version__
from .approval import ApprovalDenied, require_approval
from .client import Client, WaitTimeout
from .errors import AssentError
from .jcs import AmbiguityError, canonicalize, check_meaning, input_sha256
from .verify import (DecisionClaims, DecisionTokenError, VerificationError, WebhookEvent, WebhookVerificationError,
                     verify_decision_token, verify_webhook)
from . import models

__all__ = [
    "AmbiguityError", "AssentError", "ApprovalDenied", "Client", "DecisionClaims", "DecisionTokenError", "ERROR_CODES", "ErrorCode",
    "VerificationError", "WaitTimeout", "WebhookEvent", "WebhookVerificationError", "__version__", "canonicalize",
    "check_meaning", "input_sha256", "models", "require_approval", "verify_decision_token", "verify_webhook",
]
