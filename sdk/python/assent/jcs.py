"""RFC 8785 JSON Canonicalization Scheme (JCS), and the input hash of
decision tokens.

Numbers are written as ECMAScript writes a double (so 80, 80.0 and 8e1 are
all "80"; integers beyond 2**53 become the double they round to), strings
with the minimal escapes, and object keys sorted by their UTF-16 code units.
"""

import hashlib
import json
import math
from decimal import Decimal
from typing import Any, Dict, List, Union


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


MAX_EXACT_INTEGER = 2**53
"""Up to 2^53 a double holds every integer."""


class AmbiguityError(ValueError):
    """An input may mean one thing to its hash and another to an executor
    (see check_meaning); path names where."""

    def __init__(self, path: str, problem: str):
        super().__init__("%s %s" % (path or "the input", problem))
        self.path = path


def check_meaning(value: Any) -> None:
    """Raise AmbiguityError for an input whose meaning depends on who reads
    it: an object holding two keys equal under Unicode simple case folding
    ("amount" and "Amount", "s" and "ſ", "k" and the Kelvin sign), which Go's
    and .NET's decoders read as one field; a number beyond ±2^53, which the
    hash reads as the double it rounds to (send big ids as strings). value
    is a JSON value, or bytes of JSON text (whose numbers are read exactly);
    text that is not JSON is left to input_sha256."""
    if isinstance(value, (bytes, bytearray)):
        _check_text(bytes(value))
        return
    _walk(value, "")


def _walk(value: Any, path: str) -> None:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float, Decimal)):
        if abs(value) > MAX_EXACT_INTEGER:
            raise _beyond(path, str(value))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _walk(v, "%s[%d]" % (path, i))
    elif isinstance(value, dict):
        seen: Dict[str, str] = {}
        for k, v in value.items():
            at = "%s.%s" % (path, k) if path else str(k)
            _same_key(seen, str(k), at)
            _walk(v, at)


def _check_text(text: bytes) -> None:
    try:
        s = text.decode("utf-8")
    except UnicodeDecodeError:
        return
    if s.strip() == "":
        return

    # json hands hooks no path: each number and object becomes a marker
    # that the walk below names.
    class Num:
        def __init__(self, text: str):
            self.text = text

    class Obj:
        def __init__(self, pairs: List[Any]):
            self.pairs = pairs

    try:
        tree = json.loads(s, object_pairs_hook=Obj, parse_float=Num, parse_int=Num,
                          parse_constant=lambda name: None)
    except (ValueError, RecursionError):
        return

    def walk(v: Any, path: str) -> None:
        if isinstance(v, Num):
            if abs(Decimal(v.text)) > MAX_EXACT_INTEGER:
                raise _beyond(path, v.text)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, "%s[%d]" % (path, i))
        elif isinstance(v, Obj):
            seen: Dict[str, str] = {}
            for k, x in v.pairs:
                at = "%s.%s" % (path, k) if path else k
                _same_key(seen, k, at)
                walk(x, at)

    walk(tree, "")


def _same_key(seen: Dict[str, str], key: str, at: str) -> None:
    folded = fold_key(key)
    if folded in seen:
        raise AmbiguityError(at, "differs from %s only by case: keys equal without regard to case mean one field to "
                                 "many executors (Go, .NET) and two to Assent" % json.dumps(seen[folded], ensure_ascii=False))
    seen[folded] = key


def _beyond(path: str, text: str) -> AmbiguityError:
    return AmbiguityError(path, "is %s, beyond ±2^53 (9007199254740992), where a double no longer holds every integer, "
                                "so it would be hashed as another number: send big ids and amounts as strings" % text)


def fold_key(key: str) -> str:
    """key with each character replaced by one of its simple case folding
    class, so that two keys fold alike exactly when Go's strings.EqualFold
    holds: upper then lower case where each is one character (not
    str.casefold, which folds ß to ss); the dotless ı folds to itself (its
    upper case I folds to i)."""
    out = []
    for ch in key:
        if ch == "\u0131":
            out.append(ch)
            continue
        u = ch.upper()
        upper = u if len(u) == 1 else ch
        low = upper.lower()
        out.append(low if len(low) == 1 else upper)
    return "".join(out)
