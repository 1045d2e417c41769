"""RFC 8785 JSON Canonicalization Scheme (JCS), and the input hash of
decision tokens.

Numbers are written as ECMAScript writes a double (so 80, 80.0 and 8e1 are
all "80"; integers beyond 2**53 become the double they round to), strings
with the minimal escapes, and object keys sorted by their UTF-16 code units.
"""

import hashlib
import json
import math
from typing import Any, List, Union


class CanonicalizationError(ValueError):
    """The value has no canonical JSON form (NaN, an infinity, a lone
    surrogate, a non-string key, or not JSON at all)."""


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 canonical JSON of value (a JSON value as Python holds it:
    dict, list, str, int, float, bool, None), as UTF-8 bytes."""
    out: List[str] = []
    _write(value, out)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError as e:
        raise CanonicalizationError("a string holds a lone surrogate") from e


def input_sha256(value: Any) -> str:
    """Lowercase hex SHA-256 of the canonical JSON of value: a decision
    token's inputSha256. bytes are read as JSON text first."""
    if isinstance(value, (bytes, bytearray)):
        value = parse(bytes(value))
    return hashlib.sha256(canonicalize(value)).hexdigest()


def parse(text: Union[str, bytes]) -> Any:
    """Parse JSON text, refusing what has no canonical form (a key twice,
    NaN and infinities); empty text is JSON null."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CanonicalizationError("not UTF-8") from e
    if text.strip() == "":
        return None

    def pairs(items: List[Any]) -> dict:
        seen: dict = {}
        for k, v in items:
            if k in seen:
                raise CanonicalizationError("the key %r appears twice" % k)
            seen[k] = v
        return seen

    def constant(name: str) -> Any:
        raise CanonicalizationError("%s is not JSON" % name)

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as e:
        raise CanonicalizationError("not JSON: %s" % e) from e


def _write(value: Any, out: List[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, (int, float)):
        out.append(format_number(value))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _write(v, out)
        out.append("]")
    elif isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise CanonicalizationError("object keys must be strings, not %s" % type(k).__name__)
        out.append("{")
        for i, k in enumerate(sorted(value, key=_utf16)):
            if i:
                out.append(",")
            out.append(_string(k))
            out.append(":")
            _write(value[k], out)
        out.append("}")
    else:
        raise CanonicalizationError("%s is not a JSON value" % type(value).__name__)


def _utf16(key: str) -> bytes:
    try:
        return key.encode("utf-16-be")
    except UnicodeEncodeError as e:
        raise CanonicalizationError("a key holds a lone surrogate") from e


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _string(s: str) -> str:
    parts = ['"']
    for ch in s:
        if ch in _ESCAPES:
            parts.append(_ESCAPES[ch])
        elif ch < " ":
            parts.append("\\u%04x" % ord(ch))
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


def format_number(n: Union[int, float]) -> str:
    """A number as ECMAScript's Number.prototype.toString writes the double
    nearest to it."""
    try:
        x = float(n)
    except OverflowError as e:
        raise CanonicalizationError("%d is beyond a double" % n) from e
    if math.isnan(x) or math.isinf(x):
        raise CanonicalizationError("%r has no JSON form" % x)
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr gives the shortest digits that read back as the same double.
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    all_digits = whole + frac
    # The value is 0.<digits> × 10**n.
    n = len(whole) + (int(exp) if exp else 0)
    digits = all_digits.lstrip("0")
    n -= len(all_digits) - len(digits)
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + s
