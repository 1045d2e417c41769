"""Checking what the instance signed: webhook and callback deliveries, and
decision tokens. Both work offline (a token's key set may be fetched once
from the issuer)."""

import base64
import hashlib
import hmac
import json
import re
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _ed25519, jcs

SIGNATURE_HEADER = "Assent-Signature"
EVENT_HEADER = "Assent-Event"
DELIVERY_HEADER = "Assent-Delivery"
ATTEMPT_HEADER = "Assent-Attempt"

DEFAULT_TOLERANCE = 300
DEFAULT_LEEWAY = 30


class VerificationError(Exception):
    """Something the instance signed did not verify. reason is a stable
    word: for deliveries missing_header, malformed_header,
    timestamp_out_of_tolerance, no_matching_signature, empty_secret or
    invalid_body; for decision tokens malformed, algorithm, unknown_key,
    signature, issuer, organization, expired, not_yet_valid, input, action
    or verifier."""

    def __init__(self, reason: str, message: str = ""):
        super().__init__(message or reason)
        self.reason = reason


class WebhookVerificationError(VerificationError):
    """A delivery did not verify; nothing in it may be trusted."""


class DecisionTokenError(VerificationError):
    """A decision token does not prove that this input was approved."""


@dataclass
class WebhookEvent:
    """A verified delivery: the envelope's fields and its headers."""

    event: str
    sent_at: Optional[str]
    data: Any
    request_type: Optional[str] = None
    request_id: Optional[str] = None
    test: bool = False
    delivery_id: Optional[str] = None
    attempt: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict)


def _header(headers: Any, name: str) -> Optional[str]:
    if headers is None:
        return None
    get = getattr(headers, "get", None)
    if get is not None:
        value = get(name)
        if value is not None:
            return value
    items = headers.items() if hasattr(headers, "items") else headers
    for k, v in items:
        if k.lower() == name.lower():
            return v
    return None


_DIGITS = re.compile(r"^[0-9]+$")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


def verify_webhook(raw_body: Union[bytes, str], headers: Any, secret: str, tolerance: int = DEFAULT_TOLERANCE,
                   now: Optional[float] = None) -> WebhookEvent:
    """Check a delivery's Assent-Signature against the raw body as received
    and return the parsed event.

    headers is any mapping of the request's headers (names in any case).
    Accepts when t is within tolerance seconds of now (either direction) and
    any v1 matches HMAC-SHA256(secret, t + "." + body), compared in constant
    time. Raises WebhookVerificationError otherwise.
    """
    if not secret:
        raise WebhookVerificationError("empty_secret", "verifying with an empty secret would accept anyone's forgery")
    body = raw_body.encode("utf-8") if isinstance(raw_body, str) else bytes(raw_body)
    header = _header(headers, SIGNATURE_HEADER)
    if header is None:
        raise WebhookVerificationError("missing_header", "the delivery has no %s header" % SIGNATURE_HEADER)
    ts: Optional[int] = None
    sigs: List[bytes] = []
    for part in header.split(","):
        key, eq, value = part.partition("=")
        if not eq:
            raise WebhookVerificationError("malformed_header", "malformed %s" % SIGNATURE_HEADER)
        if key == "t":
            if ts is not None or not _DIGITS.match(value) or int(value) > 2**63 - 1:
                raise WebhookVerificationError("malformed_header", "malformed t in %s" % SIGNATURE_HEADER)
            ts = int(value)
        elif key == "v1":
            if not _HEX64.match(value):
                raise WebhookVerificationError("malformed_header", "malformed v1 in %s" % SIGNATURE_HEADER)
            sigs.append(bytes.fromhex(value))
    if ts is None or not sigs:
        raise WebhookVerificationError("malformed_header", "%s needs one t and at least one v1" % SIGNATURE_HEADER)
    current = int(time.time() if now is None else now)
    if tolerance <= 0:
        tolerance = DEFAULT_TOLERANCE
    if abs(ts - current) > tolerance:
        raise WebhookVerificationError("timestamp_out_of_tolerance", "the signature's t is more than %d s from now" % tolerance)
    want = hmac.new(secret.encode("utf-8"), str(ts).encode("ascii") + b"." + body, hashlib.sha256).digest()
    ok = False
    for sig in sigs:
        ok = hmac.compare_digest(sig, want) or ok  # every v1, without stopping early
    if not ok:
        raise WebhookVerificationError("no_matching_signature", "no v1 matches this body and secret")
    try:
        envelope = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise WebhookVerificationError("invalid_body", "the signed body is not JSON") from e
    if not isinstance(envelope, dict):
        raise WebhookVerificationError("invalid_body", "the signed body is not a JSON object")
    attempt = _header(headers, ATTEMPT_HEADER)
    return WebhookEvent(
        event=envelope.get("event") or _header(headers, EVENT_HEADER) or "",
        sent_at=envelope.get("sentAt"),
        data=envelope.get("data"),
        request_type=envelope.get("requestType"),
        request_id=envelope.get("requestId"),
        test=bool(envelope.get("test", False)),
        delivery_id=_header(headers, DELIVERY_HEADER),
        attempt=int(attempt) if attempt and attempt.isdigit() else None,
        raw=envelope,
    )


@dataclass
class DecisionClaims:
    """What a verified decision token says."""

    issuer: str
    subject: str
    organization: str
    input_sha256: str
    deciders: List[str]
    issued_at: int
    expires_at: int
    action: Optional[str] = None
    # The token's jti, which an execution receipt names it by; None on
    # tokens issued before receipts.
    id: Optional[str] = None
    # The standing mandate that allowed a gate check (its granter the one
    # decider); None otherwise.
    mandate: Optional[str] = None


_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")


def _b64decode(segment: str) -> bytes:
    if not _B64URL.match(segment) or len(segment) % 4 == 1:
        raise DecisionTokenError("malformed", "not base64url")
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def _key_set(jwks: Union[Mapping[str, Any], str, bytes]) -> Mapping[str, Any]:
    if isinstance(jwks, (str, bytes)):
        jwks = json.loads(jwks)
    if not isinstance(jwks, Mapping) or not isinstance(jwks.get("keys"), list):
        raise DecisionTokenError("verifier", "not a JSON Web Key set")
    return jwks


def fetch_jwks(issuer: str, timeout: float = 10.0) -> Dict[str, Any]:
    """The instance's decision keys, from <issuer>/.well-known/jwks.json."""
    with urllib.request.urlopen(issuer.rstrip("/") + "/.well-known/jwks.json", timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def verify_decision_token(token: str, input: Any, *, issuer: str, organization: str,
                          jwks: Optional[Union[Mapping[str, Any], str, bytes]] = None, action: Optional[str] = None,
                          now: Optional[float] = None, leeway: int = DEFAULT_LEEWAY) -> DecisionClaims:
    """Check that token proves input was approved, and return its claims.

    input is the input about to run: a JSON value (dict, list, …), or bytes
    of JSON text. It is compared by the SHA-256 of its RFC 8785 canonical
    form, so key order, whitespace and number spelling do not matter; an
    input that may mean something else to an executor (jcs.check_meaning:
    keys equal without regard to case in one object, numbers beyond
    ±2^53) is refused as "input".
    issuer is the instance's base URL (the token's iss); organization the
    organisation whose decisions are accepted. jwks is the instance's key
    set (the JSON of /.well-known/jwks.json); without it, it is fetched from
    the issuer. With action, the token must have been issued for that
    registered action. Raises DecisionTokenError with the reason.
    """
    if not issuer or not organization:
        raise DecisionTokenError("verifier", "name the issuer and the organisation whose decisions to accept")
    keys = _key_set(jwks if jwks is not None else fetch_jwks(issuer))
    if not keys["keys"]:
        raise DecisionTokenError("verifier", "the key set is empty")
    if not isinstance(token, str):
        raise DecisionTokenError("malformed", "a token is a string")
    parts = token.split(".")
    if len(parts) != 3:
        raise DecisionTokenError("malformed", "not a compact JWS")
    try:
        header = json.loads(_b64decode(parts[0]).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise DecisionTokenError("malformed", "the header is not JSON") from e
    if not isinstance(header, dict):
        raise DecisionTokenError("malformed", "the header is not a JSON object")
    if header.get("alg") != "EdDSA":
        raise DecisionTokenError("algorithm", "signed with %r, not EdDSA" % header.get("alg"))
    signature = _b64decode(parts[2])
    kid = header.get("kid")
    public = _public_key(keys, kid) if isinstance(kid, str) and kid else None
    if public is None:
        raise DecisionTokenError("unknown_key", "no Ed25519 key of the set has kid %r" % kid)
    if not _ed25519.verify(public, (parts[0] + "." + parts[1]).encode("ascii"), signature):
        raise DecisionTokenError("signature", "the signature does not match")
    try:
        c = json.loads(_b64decode(parts[1]).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise DecisionTokenError("malformed", "the claims are not JSON") from e
    if not isinstance(c, dict):
        raise DecisionTokenError("malformed", "the claims are not a JSON object")
    iat, exp = c.get("iat"), c.get("exp")
    if (not c.get("sub") or not c.get("org") or not isinstance(c.get("inputSha256"), str)
            or not re.match(r"^[0-9a-f]{64}$", c["inputSha256"]) or not _seconds(iat) or not _seconds(exp)):
        raise DecisionTokenError("malformed", "missing claims")
    if c.get("iss") != issuer:
        raise DecisionTokenError("issuer", "issued by %r" % c.get("iss"))
    if c.get("org") != organization:
        raise DecisionTokenError("organization", "decided in %r" % c.get("org"))
    current = time.time() if now is None else now
    if current > exp + leeway:
        raise DecisionTokenError("expired", "expired at %d" % exp)
    if iat > current + leeway:
        raise DecisionTokenError("not_yet_valid", "issued in the future, at %d" % iat)
    try:
        # An input an executor may read otherwise than its hash is refused
        # even when the hash matches: an older server may have approved it.
        jcs.check_meaning(input)
    except jcs.AmbiguityError as e:
        raise DecisionTokenError("input", "the input may mean something else to an executor: %s" % e) from e
    try:
        digest = jcs.input_sha256(input)
    except jcs.CanonicalizationError as e:
        raise DecisionTokenError("input", "the input has no canonical JSON form: %s" % e) from e
    if not hmac.compare_digest(digest, c["inputSha256"]):
        raise DecisionTokenError("input", "the input is not the one approved")
    claims = DecisionClaims(issuer=c["iss"], subject=c["sub"], organization=c["org"], input_sha256=c["inputSha256"],
                            deciders=list(c.get("deciders") or []), issued_at=iat, expires_at=exp, action=c.get("action") or None,
                            id=c.get("jti") or None, mandate=c.get("mandate") or None)
    if action is not None and claims.action != action:
        raise DecisionTokenError("action", "decided for %r, not %r" % (claims.action, action))
    return claims


def _seconds(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v != 0


def _public_key(keys: Mapping[str, Any], kid: str) -> Optional[bytes]:
    for k in keys["keys"]:
        if not isinstance(k, Mapping) or k.get("kid") != kid:
            continue
        if k.get("kty") != "OKP" or k.get("crv") != "Ed25519":
            continue
        if k.get("alg") not in (None, "", "EdDSA") or k.get("use") not in (None, "", "sig"):
            continue
        try:
            x = _b64decode(k.get("x", ""))
        except DecisionTokenError:
            continue
        if len(x) == 32:
            return x
    return None
