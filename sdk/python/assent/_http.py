"""The one request function every resource method goes through: the
operation table, authentication, idempotency keys, retries and errors."""

import dataclasses
import email.utils
import http.client
import json
import os
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from ._generated import MODELS, OPERATIONS
from ._version import __version__
from .errors import AssentError

DEFAULT_BASE_URL = "http://127.0.0.1:8080"

# The operations each public method calls, filled by @operation; the drift
# test compares it with the document.
OPERATION_USES: Dict[str, str] = {}


def operation(*operation_ids: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a method as the SDK's surface of these operations."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        for op_id in operation_ids:
            if op_id not in OPERATIONS:
                raise LookupError("%s uses %s, which the document does not have" % (fn.__qualname__, op_id))
            OPERATION_USES.setdefault(op_id, fn.__qualname__)
        fn.__assent_operations__ = operation_ids  # type: ignore[attr-defined]
        return fn

    return mark


class Transport:
    """HTTP with the SDK's manners. Every POST carries an Idempotency-Key
    (the caller's, or a fresh one kept across its retries); network errors,
    5xx, 429 and 409 idempotency_in_progress are retried with exponential
    backoff and full jitter, honouring Retry-After; other 4xx never are."""

    def __init__(self, base_url: Optional[str], api_key: Optional[str], timeout: float, max_retries: int,
                 backoff: float, max_backoff: float, user_agent: Optional[str]):
        self.base_url = (base_url or os.environ.get("ASSENT_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("ASSENT_API_KEY")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.user_agent = "assent-python/%s" % __version__ + (" " + user_agent if user_agent else "")
        self.sleep: Callable[[float], None] = time.sleep

    def url(self, op_id: str, path_params: Optional[Mapping[str, Any]], query: Optional[Mapping[str, Any]]) -> str:
        op = OPERATIONS[op_id]
        path = op.path
        given = dict(path_params or {})
        for name in op.path_params:
            if name not in given or given[name] in (None, ""):
                raise ValueError("%s needs %s" % (op_id, name))
            path = path.replace("{%s}" % name, urllib.parse.quote(str(given.pop(name)), safe=""))
        if given:
            raise ValueError("%s has no path parameter %s" % (op_id, ", ".join(sorted(given))))
        pairs = []
        for key, value in (query or {}).items():
            if value is None:
                continue
            if key not in op.query:
                raise ValueError("%s takes no query parameter %r (it takes %s)" % (op_id, key, ", ".join(op.query) or "none"))
            if isinstance(value, bool):
                value = "true" if value else "false"
            pairs.append((key, str(value)))
        return self.base_url + path + ("?" + urllib.parse.urlencode(pairs) if pairs else "")

    def request(self, op_id: str, path_params: Optional[Mapping[str, Any]] = None, query: Optional[Mapping[str, Any]] = None,
                body: Any = None, *, idempotency_key: Optional[str] = None, timeout: Optional[float] = None,
                content_type: Optional[str] = None, url: Optional[str] = None, auth: bool = True,
                retries: Optional[int] = None) -> Tuple[int, Any]:
        """Call the operation and return (status, decoded body): a model, JSON
        of any shape, bytes, or None. Raises AssentError."""
        op = OPERATIONS[op_id]
        target = url or self.url(op_id, path_params, query)
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if auth and url is None:
            if not self.api_key:
                raise AssentError(0, "no_api_key", "no API key: pass api_key or set ASSENT_API_KEY")
            headers["Authorization"] = "Bearer " + self.api_key
        data: Optional[bytes] = None
        if body is not None or (op.body is not None and op.method == "POST"):
            data, ctype = self._encode(op_id, body, content_type)
            headers["Content-Type"] = ctype
        if op.method == "POST" and url is None:
            headers["Idempotency-Key"] = idempotency_key or "assent-python-" + uuid.uuid4().hex
        attempts = 1 + (self.max_retries if retries is None else retries)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                status, resp_headers, payload = self._send(op.method, target, headers, data, timeout or self.timeout)
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError, OSError) as e:
                if last:
                    raise AssentError(0, "network_error", "%s %s: %s" % (op.method, target, getattr(e, "reason", e))) from e
                self.sleep(self._delay(attempt, None))
                continue
            if 200 <= status < 300:
                return status, self._decode(op_id, status, resp_headers, payload)
            err = AssentError.from_response(status, payload, resp_headers)
            retryable = status >= 500 or status == 429 or (status == 409 and err.code == "idempotency_in_progress")
            if not retryable or last:
                raise err
            self.sleep(self._delay(attempt, resp_headers.get("Retry-After")))
        raise AssertionError("unreachable")

    def _encode(self, op_id: str, body: Any, content_type: Optional[str]) -> Tuple[bytes, str]:
        op = OPERATIONS[op_id]
        if op.body == "bytes":
            if isinstance(body, str):
                body = body.encode("utf-8")
            if not isinstance(body, (bytes, bytearray)):
                raise TypeError("%s takes bytes" % op_id)
            ctype = content_type or op.body_types[0]
            if ctype not in op.body_types:
                raise ValueError("%s takes %s, not %s" % (op_id, " or ".join(op.body_types), ctype))
            return bytes(body), ctype
        if body is None:
            body = {}
        if hasattr(body, "to_dict"):
            body = body.to_dict()
        elif op.body in MODELS and isinstance(body, Mapping):
            _check_fields(op.body, body)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), "application/json"

    def _send(self, method: str, url: str, headers: Dict[str, str], data: Optional[bytes], timeout: float):
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as e:
            try:
                payload = e.read()
            except (http.client.HTTPException, OSError):
                payload = b""
            return e.code, e.headers, payload

    def _decode(self, op_id: str, status: int, headers: Any, payload: bytes) -> Any:
        kind = OPERATIONS[op_id].responses.get(str(status))
        if kind is None or not payload:
            return None
        ctype = (headers.get("Content-Type") or "").split(";")[0].strip()
        if kind == "bytes" or (ctype and ctype != "application/json" and not ctype.endswith("+json")):
            return payload
        value = json.loads(payload.decode("utf-8"))
        if kind in MODELS and isinstance(value, dict):
            return MODELS[kind].from_dict(value)
        return value

    def _delay(self, attempt: int, retry_after: Optional[str]) -> float:
        if retry_after:
            seconds: Optional[float] = None
            try:
                seconds = float(retry_after)
            except ValueError:
                try:
                    seconds = email.utils.parsedate_to_datetime(retry_after).timestamp() - time.time()
                except (TypeError, ValueError):
                    seconds = None
            if seconds is not None:
                return max(0.0, min(seconds, 60.0))
        return random.uniform(0, min(self.max_backoff, self.backoff * (2 ** attempt)))


def _check_fields(model: str, body: Mapping[str, Any]) -> None:
    """Refuse a dict body with a key the operation's schema lacks: the SDK
    sends nothing the document does not describe. The dict is sent as
    given, explicit nulls included."""
    names = {f.metadata["json"] for f in dataclasses.fields(MODELS[model])}
    unknown = [k for k in body if k not in names]
    if unknown:
        raise ValueError("%s has no field %s" % (model, ", ".join(sorted(unknown))))
