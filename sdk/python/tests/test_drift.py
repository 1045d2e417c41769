"""The SDK holds the contract: every operation and every field of
sdk/openapi.json is in the SDK, and the SDK sends or expects nothing the
document lacks. check() is the comparison; the tests run it on the document
and on copies with a deliberate difference, which it must report."""

import dataclasses
import importlib.util
import json
import os
import unittest
from typing import Any, Dict, List

import assent
from assent import _generated
from assent._http import OPERATION_USES
from assent.client import NOT_SURFACED

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "openapi.json")


def _generator():
    spec = importlib.util.spec_from_file_location("assent_generate", os.path.join(HERE, "..", "tools", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def load_doc() -> Dict[str, Any]:
    with open(DOC, encoding="utf-8") as f:
        return json.load(f)


def check(doc: Dict[str, Any]) -> List[str]:
    """Every difference between the document and the SDK, one line each."""
    want = _generator().expected(doc)
    problems: List[str] = []

    # Operations: the table the one request function reads.
    have_ops = {k: dataclasses.asdict(v) for k, v in _generated.OPERATIONS.items()}
    for op_id in sorted(set(want["operations"]) - set(have_ops)):
        problems.append("operation %s: in the document, missing from the SDK" % op_id)
    for op_id in sorted(set(have_ops) - set(want["operations"])):
        problems.append("operation %s: in the SDK, not in the document" % op_id)
    for op_id in sorted(set(have_ops) & set(want["operations"])):
        for key, value in want["operations"][op_id].items():
            if have_ops[op_id][key] != value:
                problems.append("operation %s: %s is %r in the document, %r in the SDK" % (op_id, key, value, have_ops[op_id][key]))

    # The public surface: a method for every operation, and no method for
    # an operation the document lacks.
    for op_id in sorted(set(want["operations"]) - set(OPERATION_USES) - set(NOT_SURFACED)):
        problems.append("operation %s: no client method calls it" % op_id)
    for op_id in sorted(set(OPERATION_USES) - set(want["operations"])):
        problems.append("operation %s: %s calls it, the document lacks it" % (op_id, OPERATION_USES[op_id]))

    # Models: the dataclasses' fields against the schemas' properties.
    have_models = {name: {f.metadata["json"]: f.metadata["required"] for f in dataclasses.fields(cls)}
                   for name, cls in _generated.MODELS.items()}
    for name in sorted(set(want["models"]) - set(have_models)):
        problems.append("schema %s: in the document, no dataclass in the SDK" % name)
    for name in sorted(set(have_models) - set(want["models"])):
        problems.append("schema %s: a dataclass in the SDK, not in the document" % name)
    for name in sorted(set(have_models) & set(want["models"])):
        doc_fields, sdk_fields = want["models"][name], have_models[name]
        for prop in sorted(set(doc_fields) - set(sdk_fields)):
            problems.append("schema %s: field %s in the document, missing from the SDK" % (name, prop))
        for prop in sorted(set(sdk_fields) - set(doc_fields)):
            problems.append("schema %s: field %s in the SDK, not in the document" % (name, prop))
        for prop in sorted(set(doc_fields) & set(sdk_fields)):
            if doc_fields[prop] != sdk_fields[prop]:
                problems.append("schema %s: field %s is %s in the document" % (name, prop, "required" if doc_fields[prop] else "optional"))

    # Error codes.
    for code in sorted(set(want["codes"]) - _generated.ERROR_CODES):
        problems.append("error code %s: in the document, missing from ErrorCode" % code)
    for code in sorted(_generated.ERROR_CODES - set(want["codes"])):
        problems.append("error code %s: in ErrorCode, not in the document" % code)
    return problems


class Drift(unittest.TestCase):
    def test_sdk_matches_the_document(self):
        self.assertEqual([], check(load_doc()))

    def test_generated_code_is_what_the_document_makes(self):
        with open(os.path.join(HERE, "..", "assent", "_generated.py"), encoding="utf-8") as f:
            committed = f.read()
        self.assertEqual(_generator().generate(load_doc()), committed,
                         "assent/_generated.py is stale: run python3 sdk/python/tools/generate.py")

    def test_reports_a_field_removed_from_the_document(self):
        doc = load_doc()
        del doc["components"]["schemas"]["Approval"]["properties"]["approvedInput"]
        self.assertIn("schema Approval: field approvedInput in the SDK, not in the document", check(doc))

    def test_reports_a_field_the_sdk_lacks(self):
        doc = load_doc()
        doc["components"]["schemas"]["ApprovalCreate"]["properties"]["priority"] = {"type": "integer"}
        self.assertIn("schema ApprovalCreate: field priority in the document, missing from the SDK", check(doc))

    def test_reports_a_nested_field(self):
        doc = load_doc()
        del doc["components"]["schemas"]["Person"]["properties"]["via"]["items"]["properties"]["field"]
        self.assertIn("schema PersonViaItem: field field in the SDK, not in the document", check(doc))

    def test_reports_a_field_made_required(self):
        doc = load_doc()
        doc["components"]["schemas"]["ApprovalCreate"]["required"].append("risk")
        self.assertIn("schema ApprovalCreate: field risk is required in the document", check(doc))

    def test_reports_an_operation_removed_or_added(self):
        doc = load_doc()
        del doc["paths"]["/api/v1/approvals/{id}/cancel"]
        problems = check(doc)
        self.assertIn("operation cancelApproval: in the SDK, not in the document", problems)
        self.assertIn("operation cancelApproval: Approvals.cancel calls it, the document lacks it", problems)

        doc = load_doc()
        doc["paths"]["/api/v1/approvals/{id}/remind"] = {"post": {"operationId": "remindApproval", "responses": {"204": {"description": "ok"}}}}
        problems = check(doc)
        self.assertIn("operation remindApproval: in the document, missing from the SDK", problems)
        self.assertIn("operation remindApproval: no client method calls it", problems)

    def test_reports_a_query_parameter_change(self):
        doc = load_doc()
        params = doc["paths"]["/api/v1/approvals"]["get"]["parameters"]
        doc["paths"]["/api/v1/approvals"]["get"]["parameters"] = [p for p in params if p.get("name") != "externalId"]
        self.assertTrue(any(p.startswith("operation listApprovals: query is") for p in check(doc)), check(doc))

    def test_reports_an_error_code_added(self):
        doc = load_doc()
        responses = doc["paths"]["/api/v1/approvals"]["post"]["responses"]
        responses["418"] = {"description": "x", "content": {"application/json": {"schema": {
            "properties": {"error": {"properties": {"code": {"const": "teapot"}}}}}}}}
        self.assertIn("error code teapot: in the document, missing from ErrorCode", check(doc))

    def test_the_sdk_refuses_to_send_a_field_the_document_lacks(self):
        client = assent.Client("http://127.0.0.1:9", "asnt_agent_x")
        with self.assertRaises(TypeError):
            client.approvals.create("t", {}, priority=1)
        with self.assertRaises(ValueError):
            client.request("createApproval", body={"title": "t", "priority": 1})
        with self.assertRaises(ValueError):
            client.request("listApprovals", query={"sort": "asc"})



if __name__ == "__main__":
    unittest.main()
