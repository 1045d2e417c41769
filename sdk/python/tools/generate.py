"""Generate assent/_generated.py from sdk/openapi.json.

The generated module holds what follows mechanically from the contract: a
dataclass per object schema (nested inline objects included), the table of
operations keyed by operationId, and the error codes. The hand-written
client builds on it. `python3 tools/generate.py` rewrites the file;
`python3 tools/generate.py --check` fails when it differs (the test suite
runs the same check).
"""

import json
import keyword
import os
import re
import sys
import textwrap
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOC = os.path.join(ROOT, "..", "openapi.json")
OUT = os.path.join(ROOT, "assent", "_generated.py")

METHODS = ("get", "post", "put", "patch", "delete")


def snake(name: str) -> str:
    """approvedInput -> approved_input; keywords get a trailing underscore."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s).lower()
    s = re.sub(r"[^a-z0-9_]", "_", s)
    if keyword.iskeyword(s):
        s += "_"
    return s


def ref_name(schema: Dict[str, Any]) -> Optional[str]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        return ref[len("#/components/schemas/"):]
    return None


def types_of(schema: Dict[str, Any]) -> List[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return t
    if isinstance(t, str):
        return [t]
    return []


def object_properties(doc: Dict[str, Any], schema: Dict[str, Any]) -> Optional[Tuple[Dict[str, Any], List[str]]]:
    """The properties and required names of an object schema (allOf merged),
    or None when the schema is not an object with properties."""
    props: Dict[str, Any] = {}
    required: List[str] = []
    found = False
    for part in schema.get("allOf", []):
        name = ref_name(part)
        sub = doc["components"]["schemas"][name] if name else part
        got = object_properties(doc, sub)
        if got:
            found = True
            props.update(got[0])
            required += [r for r in got[1] if r not in required]
    if isinstance(schema.get("properties"), dict) and schema["properties"]:
        found = True
        props.update(schema["properties"])
        required += [r for r in schema.get("required", []) if r not in required]
    return (props, required) if found else None


class Generator:
    def __init__(self, doc: Dict[str, Any]):
        self.doc = doc
        self.schemas = doc["components"]["schemas"]
        self.models: List[Tuple[str, str, Dict[str, Any], List[str], str]] = []  # (class, schema path, props, required, doc)
        self.done = set()
        self.ops: Dict[str, Dict[str, Any]] = {}
        self.closed: Dict[str, bool] = {}
        self.codes: List[str] = []

    def is_model(self, name: str) -> bool:
        return object_properties(self.doc, self.schemas[name]) is not None

    def descriptor(self, schema: Dict[str, Any], owner: str, prop: str) -> Tuple[str, str]:
        """(type descriptor, Python type hint) of a property's schema. A
        descriptor is a model's class name, [inner] for a list, {inner} for
        a map, or 'any'."""
        name = ref_name(schema)
        if name:
            if self.is_model(name):
                return name, name
            return "any", self.hint_of(self.schemas[name])
        for key in ("oneOf", "anyOf"):
            if key in schema:
                options = [o for o in schema[key] if types_of(o) != ["null"]]
                if len(options) == 1:
                    return self.descriptor(options[0], owner, prop)
                return "any", "Any"
        ts = [t for t in types_of(schema) if t != "null"]
        if ts == ["array"] and isinstance(schema.get("items"), dict):
            inner, hint = self.descriptor(schema["items"], owner, prop + "Item")
            return "[" + inner + "]", "List[" + hint + "]"
        if ts == ["object"] or (not ts and "properties" in schema):
            if object_properties(self.doc, schema):
                cls = owner + "".join(w[:1].upper() + w[1:] for w in prop.split("_"))
                self.add_model(cls, owner + "." + prop, schema)
                return cls, cls
            ap = schema.get("additionalProperties")
            if isinstance(ap, dict) and ap:
                inner, hint = self.descriptor(ap, owner, prop + "Value")
                return "{" + inner + "}", "Dict[str, " + hint + "]"
            return "any", "Dict[str, Any]"
        return "any", self.hint_of(schema)

    def hint_of(self, schema: Dict[str, Any]) -> str:
        ts = [t for t in types_of(schema) if t != "null"]
        if "enum" in schema or "const" in schema:
            values = schema.get("enum", [schema.get("const")])
            if all(isinstance(v, str) for v in values if v is not None):
                return "str"
        simple = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "Dict[str, Any]", "array": "List[Any]"}
        if len(ts) == 1:
            return simple[ts[0]]
        if ts == ["integer", "string"] or ts == ["string", "integer"]:
            return "Union[str, int]"
        return "Any"

    def add_model(self, cls: str, path: str, schema: Dict[str, Any]) -> None:
        if cls in self.done:
            return
        self.done.add(cls)
        props, required = object_properties(self.doc, schema)
        self.models.append((cls, path, props, required, schema.get("description", "")))
        self.closed[cls] = schema.get("additionalProperties") is False

    def render(self) -> str:
        for name in sorted(self.schemas):
            if self.is_model(name):
                self.add_model(name, name, self.schemas[name])
        out: List[str] = [
            "# Code generated by tools/generate.py from sdk/openapi.json. DO NOT EDIT.",
            '"""The contract\'s schemas as dataclasses, its operations and its error codes."""',
            "",
            "from __future__ import annotations",
            "",
            "from dataclasses import dataclass, field as _field",
            "from typing import Any, Dict, List, Optional, Union",
            "",
            "from ._model import Model, Operation",
            "",
            "",
        ]
        out += self.render_codes()
        i = 0
        while i < len(self.models):  # nested models are appended while rendering
            cls, path, props, required, description = self.models[i]
            i += 1
            out += self.render_model(cls, path, props, required, description)
        out.append("MODELS: Dict[str, type] = {")
        for cls, _, _, _, _ in sorted(self.models):
            out.append("    %r: %s," % (cls, cls))
        out.append("}")
        out.append("")
        out += self.render_operations()
        return "\n".join(out) + "\n"

    def render_model(self, cls: str, path: str, props: Dict[str, Any], required: List[str], description: str) -> List[str]:
        lines = ["", "@dataclass", "class %s(Model):" % cls]
        summary = " ".join(description.split())
        doc = "Schema %s." % path + ((" " + summary) if summary else "")
        text = doc.replace("\\", "\\\\").replace('"', "'")
        wrapped = textwrap.wrap(text, 96)
        lines.append('    """' + wrapped[0] + ("" if len(wrapped) > 1 else '"""'))
        if len(wrapped) > 1:
            lines += ["    " + w for w in wrapped[1:]]
            lines.append('    """')
        lines.append("")
        lines.append("    _closed = %s  # whether the schema refuses other properties" % self.closed[cls])
        for prop in props:  # the document's order
            schema = props[prop]
            desc, hint = self.descriptor(schema, cls, prop)
            nullable = "null" in types_of(schema) or any(types_of(o) == ["null"] for o in schema.get("oneOf", []))
            lines.append("    %s: Optional[%s] = _field(default=None, metadata={\"json\": %r, \"type\": %r, \"required\": %s, \"nullable\": %s})" % (
                snake(prop), hint, prop, desc, prop in required, nullable))
        if not props:
            lines.append("    pass")
        lines.append("")
        return lines

    def render_codes(self) -> List[str]:
        codes = set()

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                props = node.get("properties")
                if isinstance(props, dict) and isinstance(props.get("error"), dict):
                    code = (props["error"].get("properties") or {}).get("code") or {}
                    if "const" in code:
                        codes.add(code["const"])
                    codes.update(code.get("enum", []))
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(self.doc)
        self.codes = sorted(codes)
        lines = ["class ErrorCode:", '    """The error codes the document names; compare with AssentError.code."""', ""]
        for code in sorted(codes):
            lines.append("    %s = %r" % (code.upper(), code))
        lines += ["", "", "ERROR_CODES = frozenset(v for k, v in vars(ErrorCode).items() if k.isupper())", "", ""]
        return lines

    def render_operations(self) -> List[str]:
        lines = ["", "OPERATIONS: Dict[str, Operation] = {"]
        ops = []
        for path, item in self.doc["paths"].items():
            shared = item.get("parameters", [])
            for method in METHODS:
                if method in item:
                    ops.append((item[method]["operationId"], method, path, shared + item[method].get("parameters", []), item[method]))
        for op_id, method, path, params, op in sorted(ops):
            path_params, query = [], []
            for p in params:
                if "$ref" in p:
                    p = self.doc["components"]["parameters"][p["$ref"].split("/")[-1]]
                if p["in"] == "path":
                    path_params.append(p["name"])
                elif p["in"] == "query":
                    query.append(p["name"])
            body, body_types = None, []
            if "requestBody" in op:
                for ct, c in op["requestBody"]["content"].items():
                    body_types.append(ct)
                    schema = c.get("schema") or {}
                    body = ref_name(schema) or ("bytes" if schema.get("format") == "binary" or ct != "application/json" else "any")
                    if ct == "application/json":
                        break
            responses = {}
            for status, r in op["responses"].items():
                if not status.startswith("2"):
                    continue
                content = r.get("content") or {}
                if not content:
                    responses[status] = None
                    continue
                ct, c = next(iter(content.items()))
                schema = c.get("schema") or {}
                name = ref_name(schema)
                responses[status] = name if name and self.is_model(name) else ("bytes" if ct != "application/json" else "any")
            self.ops[op_id] = dict(method=method.upper(), path=path, path_params=tuple(path_params), query=tuple(query), body=body,
                                   body_types=tuple(body_types), responses=responses)
            lines.append("    %r: Operation(%r, %r, path_params=%r, query=%r, body=%r, body_types=%r, responses=%r)," % (
                op_id, method.upper(), path, tuple(path_params), tuple(query), body, tuple(body_types), responses))
        lines.append("}")
        return lines


def generate(doc: Dict[str, Any]) -> str:
    return Generator(doc).render()


def expected(doc: Dict[str, Any]) -> Dict[str, Any]:
    """What the document says the SDK must hold: models (class -> {JSON
    property: required}), operations (operationId -> how it is called) and
    error codes. The drift test compares the SDK with it."""
    g = Generator(doc)
    g.render()
    models = {cls: {prop: prop in required for prop in props} for cls, _, props, required, _ in g.models}
    return {"models": models, "operations": g.ops, "codes": g.codes}


def main() -> int:
    with open(DOC, encoding="utf-8") as f:
        doc = json.load(f)
    text = generate(doc)
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("assent/_generated.py differs from what sdk/openapi.json makes; run python3 tools/generate.py", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
