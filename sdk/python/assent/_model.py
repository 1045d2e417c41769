"""The base of the generated dataclasses, and the shape of an operation."""

import dataclasses
from typing import Any, Dict, Mapping, Optional, Tuple, Type, TypeVar

T = TypeVar("T", bound="Model")


class Model:
    """A schema of the contract as a dataclass.

    Fields are snake_case; each one's metadata names its JSON property.
    from_dict keeps properties this version of the SDK does not know in
    ``extra`` (a newer server may add some), and the whole object as received
    in ``raw``; to_dict writes the fields that are set, JSON names, nested
    models as objects.
    """

    @classmethod
    def from_dict(cls: Type[T], data: Mapping[str, Any]) -> T:
        if not isinstance(data, Mapping):
            raise TypeError("%s expects a JSON object, got %s" % (cls.__name__, type(data).__name__))
        values = {}
        known = set()
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            name = f.metadata["json"]
            known.add(name)
            if name in data:
                values[f.name] = _decode(f.metadata["type"], data[name])
        obj = cls(**values)
        object.__setattr__(obj, "extra", {k: v for k, v in data.items() if k not in known})
        object.__setattr__(obj, "raw", dict(data))
        return obj

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None:
                if f.metadata["required"] and not f.metadata["nullable"]:
                    raise ValueError("%s.%s is required" % (type(self).__name__, f.name))
                continue
            out[f.metadata["json"]] = _encode(value)
        return out

    def __getitem__(self, key: str) -> Any:
        """model["approvedInput"]: the property by its JSON name, as received."""
        raw = getattr(self, "raw", None)
        if raw is not None and key in raw:
            return raw[key]
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.metadata["json"] == key:
                return _encode(getattr(self, f.name))
        raise KeyError(key)


def _decode(desc: str, value: Any) -> Any:
    if value is None or desc == "any":
        return value
    if desc.startswith("["):
        if not isinstance(value, list):
            return value
        inner = desc[1:-1]
        return [_decode(inner, v) for v in value]
    if desc.startswith("{"):
        if not isinstance(value, dict):
            return value
        inner = desc[1:-1]
        return {k: _decode(inner, v) for k, v in value.items()}
    from ._generated import MODELS

    if isinstance(value, dict):
        return MODELS[desc].from_dict(value)
    return value


def _encode(value: Any) -> Any:
    if isinstance(value, Model):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


@dataclasses.dataclass(frozen=True)
class Operation:
    """One operation of the contract: how to call it and what it answers.

    body and the values of responses name a model, or are "any" (JSON of
    any shape), "bytes" (a file), or None (no body).
    """

    method: str
    path: str
    path_params: Tuple[str, ...] = ()
    query: Tuple[str, ...] = ()
    body: Optional[str] = None
    body_types: Tuple[str, ...] = ()
    responses: Dict[str, Optional[str]] = dataclasses.field(default_factory=dict)
