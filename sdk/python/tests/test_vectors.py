"""The SDK agrees with the server on every case of sdk/testdata/vectors.json
(made by the server's own webhook and decisiontoken packages)."""

import json
import os
import unittest

from assent import jcs
from assent.verify import DecisionTokenError, WebhookVerificationError, verify_decision_token, verify_webhook

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "testdata", "vectors.json")


def load():
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)


class WebhookVectors(unittest.TestCase):
    def test_every_case(self):
        cases = load()["webhooks"]
        self.assertGreater(len(cases), 20)
        for c in cases:
            with self.subTest(c["name"]):
                body = c["body"].encode("utf-8")
                if c["valid"]:
                    event = verify_webhook(body, c["headers"], c["secret"], tolerance=c["tolerance"], now=c["now"])
                    self.assertEqual(c["event"], event.event)
                    self.assertEqual(json.loads(c["body"]), event.raw)
                else:
                    with self.assertRaises(WebhookVerificationError) as caught:
                        verify_webhook(body, c["headers"], c["secret"], tolerance=c["tolerance"], now=c["now"])
                    self.assertEqual(c["error"], caught.exception.reason)

    def test_empty_secret_is_refused(self):
        c = load()["webhooks"][0]
        with self.assertRaises(WebhookVerificationError) as caught:
            verify_webhook(c["body"], c["headers"], "", now=c["now"])
        self.assertEqual("empty_secret", caught.exception.reason)


class DecisionTokenVectors(unittest.TestCase):
    def test_every_case(self):
        v = load()["decisionTokens"]
        self.assertGreater(len(v["cases"]), 20)
        for c in v["cases"]:
            with self.subTest(c["name"]):
                kwargs = dict(issuer=c.get("issuer") or v["issuer"], organization=c.get("organization") or v["organization"],
                              jwks=v["jwks"], action=c.get("action"), now=c["now"], leeway=v["leeway"])
                # The input as bytes of JSON text, exactly as the case holds it.
                if c["valid"]:
                    claims = verify_decision_token(c["token"], c["input"].encode("utf-8"), **kwargs)
                    self.assertEqual(c["subject"], claims.subject)
                    # and as the Python value a tool would hold.
                    verify_decision_token(c["token"], json.loads(c["input"]), **kwargs)
                else:
                    with self.assertRaises(DecisionTokenError) as caught:
                        verify_decision_token(c["token"], c["input"].encode("utf-8"), **kwargs)
                    self.assertEqual(c["error"], caught.exception.reason)

    def test_ambiguous_input_refused_as_a_value_too(self):
        v = load()["decisionTokens"]
        # Python holds big integers exactly and a float beyond 2^53 is
        # refused too; 9007199254740992.5 read as a float is 2^53 already.
        cases = [c for c in v["cases"] if (c["name"].startswith("input_keys") or c["name"].endswith("beyond_2_53"))
                 and "fraction" not in c["name"]]
        self.assertGreaterEqual(len(cases), 7)
        for c in cases:
            with self.subTest(c["name"]):
                with self.assertRaises(DecisionTokenError) as caught:
                    verify_decision_token(c["token"], json.loads(c["input"]), issuer=v["issuer"], organization=v["organization"],
                                          jwks=v["jwks"], now=c["now"], leeway=v["leeway"])
                self.assertEqual("input", caught.exception.reason)
        with self.assertRaises(jcs.AmbiguityError) as caught:
            jcs.check_meaning({"a": [{"amount": 1, "AMOUNT": 2}]})
        self.assertEqual("a[0].AMOUNT", caught.exception.path)
        with self.assertRaises(jcs.AmbiguityError) as caught:
            jcs.check_meaning(b'{"n":[1,-9007199254740993]}')
        self.assertEqual("n[1]", caught.exception.path)
        jcs.check_meaning({"n": 2**53, "ref": "9007199254740993", "\u00df": 1, "ss": 2, "\u0131": 3, "i": 4})

    def test_verifier_needs_issuer_and_organization(self):
        v = load()["decisionTokens"]
        c = v["cases"][0]
        with self.assertRaises(DecisionTokenError) as caught:
            verify_decision_token(c["token"], c["input"].encode(), issuer=v["issuer"], organization="", jwks=v["jwks"], now=c["now"])
        self.assertEqual("verifier", caught.exception.reason)


class CanonicalJSONVectors(unittest.TestCase):
    def test_every_case(self):
        for c in load()["canonicalJson"]:
            with self.subTest(c["name"]):
                self.assertEqual(c["canonical"], jcs.canonicalize(jcs.parse(c["input"])).decode("utf-8"))
                self.assertEqual(c["sha256"], jcs.input_sha256(c["input"].encode("utf-8")))

    def test_no_canonical_form(self):
        for bad in ['{"a":1,"a":2}', "NaN", "[1e400]", '"\\ud800"', '{"\\udc00":1}']:
            with self.subTest(bad), self.assertRaises(jcs.CanonicalizationError):
                jcs.input_sha256(bad.encode())
        with self.assertRaises(jcs.CanonicalizationError):
            jcs.input_sha256(b'"\xff"')


if __name__ == "__main__":
    unittest.main()
