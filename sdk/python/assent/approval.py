"""require_approval: run a function only after a person approved its input."""

import datetime as _dt
import functools
import inspect
import logging
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, TypeVar, Union

from .client import Client, Duration
from .errors import AssentError

F = TypeVar("F", bound=Callable[..., Any])


class ApprovalDenied(Exception):
    """The approval settled otherwise than approved (rejected, expired or
    cancelled); approval is its last read."""

    def __init__(self, approval: Any):
        note = getattr(approval, "note", None)
        super().__init__("approval %s was %s%s" % (approval.id, approval.status, ": " + note if note else ""))
        self.approval = approval
        self.status = approval.status


def require_approval(title: Union[str, Callable[[Dict[str, Any]], str]], *, editable_fields: Optional[Sequence[str]] = None,
                     risk: Optional[str] = None, approvers: Optional[Sequence[str]] = None, description: Optional[str] = None,
                     action: Optional[str] = None, client: Optional[Client] = None, timeout: Duration = 3600,
                     **fields: Any) -> Callable[[F], F]:
    """Decorate a function so that each call first asks a person.

    The call's arguments, by parameter name, are the approval's input (they
    must be JSON values). The function runs only once the approval is
    approved, with the approved input (the approver's corrections to
    editable_fields applied), and only if its decision token verifies
    against that input for the caller's organisation; otherwise it raises
    ApprovalDenied, DecisionTokenError or WaitTimeout and does not run.

    title may be a format string over the arguments ("Refund {order}") or
    a function of them. With action, the call goes through the action gate
    (POST /api/v1/gate) first: an allowed check runs at once with the
    input as given, a denied one raises AssentError gate_denied, and one
    that needs a person waits for the approval it raised. client defaults
    to assent.Client() from the environment.

    Once the function has run, its execution receipt is posted
    (client.receipts.create: succeeded, or failed with the exception's
    message, cut to 4096 bytes, as the result); a receipt that cannot be posted is logged as a
    warning (logger "assent"), and the call returns or raises what the
    function did.
    """

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            c = client or Client()
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            proposed = _arguments(signature, bound.arguments)
            approval = None
            if action is not None:
                answer = c.gate.check(action, proposed)
                if answer.decision == "allowed":
                    c.verify_decision_token(answer.decision_token, proposed, action=action)
                    return _reported(c, answer.decision_token, proposed, lambda: _call(fn, signature, bound.arguments, proposed))
                approval = answer.approval
            if approval is None:
                text = title(proposed) if callable(title) else title.format(**proposed)
                approval = c.approvals.create(text, proposed, editable_fields=list(editable_fields) if editable_fields else None,
                                              risk=risk, approvers=list(approvers) if approvers else None,
                                              description=description, **fields)
            settled = c.approvals.wait(approval.id, timeout)
            if settled.status != "approved":
                raise ApprovalDenied(settled)
            approved = settled.approved_input if settled.approved_input is not None else {}
            if not settled.decision_token:
                raise AssentError(0, "no_decision_token", "approval %s carries no decision token; the instance issues none "
                                  "without ASSENT_BASE_URL" % settled.id)
            c.verify_decision_token(settled.decision_token, approved, action=action)
            return _reported(c, settled.decision_token, approved, lambda: _call(fn, signature, bound.arguments, approved))

        run.__wrapped__ = fn  # type: ignore[attr-defined]
        return run  # type: ignore[return-value]

    return decorate


_log = logging.getLogger("assent")


def _reported(c: Client, token: str, input: Mapping[str, Any], run: Callable[[], Any]) -> Any:
    """Run, then post the execution receipt of token for input. A receipt
    that cannot be posted is a warning, never the function's failure."""
    started = _dt.datetime.now(_dt.timezone.utc)
    try:
        out = run()
    except Exception as e:
        _report(c, token, input, started, "failed", _failure_result(str(e)))
        raise
    _report(c, token, input, started, "succeeded", None)
    return out


# The most of an error's message a failure receipt keeps, in bytes of UTF-8,
# marker included: the API refuses a result over 64 KB, and a refused receipt
# would lose the record of the run, not just the message's tail. The Go and
# TypeScript SDKs cut at the same length.
_MAX_FAILURE_RESULT = 4096


def _failure_result(message: str) -> str:
    """message cut to _MAX_FAILURE_RESULT bytes on a character's boundary,
    ending with a marker that says so and how long it was. A lone surrogate
    (an OSError naming a file whose name is not UTF-8) becomes "?", as the
    request's body must be UTF-8 or the receipt is not posted at all."""
    data = message.encode("utf-8", "replace")
    message = data.decode("utf-8")
    if len(data) <= _MAX_FAILURE_RESULT:
        return message
    marker = "\u2026 [truncated from %d bytes]" % len(data)
    cut = _MAX_FAILURE_RESULT - len(marker.encode("utf-8"))
    while data[cut] & 0xC0 == 0x80:  # back to the start of a character
        cut -= 1
    return data[:cut].decode("utf-8") + marker


def _report(c: Client, token: str, input: Mapping[str, Any], started: _dt.datetime, outcome: str, result: Any) -> None:
    try:
        c.receipts.create(token, input, outcome, started_at=started, finished_at=_dt.datetime.now(_dt.timezone.utc), result=result)
    except Exception as e:  # the run happened; its receipt is best effort
        _log.warning("assent: the execution receipt was not posted: %s", e)


def _arguments(signature: inspect.Signature, arguments: Mapping[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, value in arguments.items():
        kind = signature.parameters[name].kind
        if kind == inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        elif kind == inspect.Parameter.VAR_POSITIONAL:
            if value:
                raise TypeError("require_approval cannot name *%s in the input; give the arguments names" % name)
        else:
            out[name] = value
    return out


def _call(fn: Callable[..., Any], signature: inspect.Signature, original: Mapping[str, Any], approved: Mapping[str, Any]) -> Any:
    """Call fn with the approved values in place of the proposed ones; an
    argument the approval left out keeps no value of its own."""
    kwargs: Dict[str, Any] = {}
    extra: Dict[str, Any] = dict(approved)
    for name, param in signature.parameters.items():
        if param.kind == inspect.Parameter.VAR_POSITIONAL:
            continue
        if param.kind == inspect.Parameter.VAR_KEYWORD:
            continue
        if name in approved:
            kwargs[name] = extra.pop(name)
    var_kw = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    if var_kw:
        kwargs.update(extra)
    positional_only = [n for n, p in signature.parameters.items() if p.kind == inspect.Parameter.POSITIONAL_ONLY]
    args = [kwargs.pop(n) for n in positional_only if n in kwargs]
    return fn(*args, **kwargs)
