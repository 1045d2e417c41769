"""The client's manners against a scripted local server: idempotency keys,
which failures are retried and which never are, Retry-After, errors,
pagination and wait()."""

import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

import assent
from assent import AssentError, ErrorCode, WaitTimeout
from assent._generated import RecordedReceipt

APPROVAL = {"id": "apr_1", "status": "pending", "title": "t", "input": {"amount": 1}}


class Scripted:
    """A server answering each request with the next scripted reply; a
    reply is (status, body, headers), or "drop" to close the connection
    without an answer."""

    def __init__(self, replies: List[Any]):
        self.replies = list(replies)
        self.requests: List[Dict[str, Any]] = []
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle_one(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                scripted.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                reply = scripted.replies.pop(0) if scripted.replies else (500, {"error": {"code": "internal_error", "message": "script ended"}}, {})
                if callable(reply):
                    reply = reply(self)
                if reply == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                status, payload, headers = reply
                data = json.dumps(payload).encode() if payload is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def err(status: int, code: str, field: Optional[str] = None, headers: Optional[Dict[str, str]] = None):
    body: Dict[str, Any] = {"error": {"code": code, "message": code.replace("_", " ")}}
    if field:
        body["error"]["field"] = field
    return (status, body, headers or {})


class TransportTest(unittest.TestCase):
    def serve(self, replies: List[Any]) -> "tuple[Scripted, assent.Client]":
        s = Scripted(replies)
        self.addCleanup(s.close)
        c = assent.Client(s.url, "asnt_agent_test", backoff=0.01, max_backoff=0.05, timeout=5)
        c._transport.sleep = lambda seconds: self.slept.append(seconds)
        return s, c

    def setUp(self) -> None:
        self.slept: List[float] = []

    def test_post_carries_one_key_across_retries(self):
        s, c = self.serve([err(503, "service_unavailable"), "drop", err(409, "idempotency_in_progress"),
                           err(429, "rate_limited", headers={"Retry-After": "2"}), (201, APPROVAL, {})])
        approval = c.approvals.create("t", {"amount": 1})
        self.assertEqual("apr_1", approval.id)
        keys = {r["headers"]["Idempotency-Key"] for r in s.requests}
        self.assertEqual(5, len(s.requests))
        self.assertEqual(1, len(keys), "the same key on every attempt")
        self.assertTrue(next(iter(keys)).startswith("assent-python-"))
        self.assertIn(2.0, self.slept, "Retry-After honoured")
        first = s.requests[0]
        self.assertEqual("Bearer asnt_agent_test", first["headers"]["Authorization"])
        self.assertTrue(first["headers"]["User-Agent"].startswith("assent-python/" + assent.__version__))
        body = json.loads(first["body"])
        self.assertEqual({"title", "input", "expiresAt"}, set(body))
        self.assertTrue(body["expiresAt"].endswith("Z"))

    def test_upload_puts_to_the_tickets_url_without_the_key(self):
        store = Scripted([(200, {"uploadId": "upl_1", "contentType": "text/html", "bytes": 4}, {})])
        self.addCleanup(store.close)
        ticket = {"uploadId": "upl_1", "uploadUrl": store.url + "/uploads/tkt", "expiresAt": "2030-01-01T00:00:00Z"}
        api, c = self.serve([(201, ticket, {})])
        self.assertEqual("upl_1", c.reports.upload(b"<h1>", "text/html").upload_id)
        self.assertEqual(["/api/v1/uploads"], [r["path"] for r in api.requests])
        put = store.requests[0]
        self.assertEqual(("PUT", "/uploads/tkt", b"<h1>", "text/html"), (put["method"], put["path"], put["body"], put["headers"]["Content-Type"]))
        self.assertNotIn("Authorization", put["headers"], "the URL is the credential")

    def test_callers_key_is_used(self):
        s, c = self.serve([(201, APPROVAL, {})])
        c.approvals.create("t", idempotency_key="refund-42")
        self.assertEqual("refund-42", s.requests[0]["headers"]["Idempotency-Key"])

    def test_expires_in_default_is_one_day(self):
        s, c = self.serve([(201, APPROVAL, {}), (201, APPROVAL, {}), (201, APPROVAL, {})])
        import datetime as dt
        c.approvals.create("t")
        at = dt.datetime.strptime(json.loads(s.requests[0]["body"])["expiresAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)
        self.assertAlmostEqual(86400, (at - dt.datetime.now(dt.timezone.utc)).total_seconds(), delta=60)
        c.approvals.create("t", expires_in=dt.timedelta(hours=2))
        at = dt.datetime.strptime(json.loads(s.requests[1]["body"])["expiresAt"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)
        self.assertAlmostEqual(7200, (at - dt.datetime.now(dt.timezone.utc)).total_seconds(), delta=60)
        c.approvals.create("t", expires_in=None)
        self.assertNotIn("expiresAt", json.loads(s.requests[2]["body"]))

    def test_other_4xx_are_never_retried(self):
        for reply in [err(400, "invalid_request", "title"), err(401, "unauthorized"), err(403, "insufficient_scope"),
                      err(404, "not_found"), err(409, "conflict"), err(422, "idempotency_key_reused")]:
            with self.subTest(reply[1]["error"]["code"]):
                s, c = self.serve([reply, (201, APPROVAL, {})])
                with self.assertRaises(AssentError) as caught:
                    c.approvals.create("t")
                self.assertEqual(1, len(s.requests))
                self.assertEqual(reply[0], caught.exception.status)
                self.assertEqual(reply[1]["error"]["code"], caught.exception.code)
        self.assertEqual("title", AssentError.from_response(400, json.dumps(err(400, "invalid_request", "title")[1]).encode()).field)

    def test_gives_up_after_max_retries(self):
        s, c = self.serve([err(500, "internal_error")] * 10)
        with self.assertRaises(AssentError) as caught:
            c.approvals.get("apr_1")
        self.assertEqual(5, len(s.requests))
        self.assertEqual(ErrorCode.INTERNAL_ERROR, caught.exception.code)

    def test_network_error_after_retries(self):
        c = assent.Client("http://127.0.0.1:9", "k", max_retries=1, backoff=0.01)
        with self.assertRaises(AssentError) as caught:
            c.approvals.get("apr_1")
        self.assertEqual((0, "network_error"), (caught.exception.status, caught.exception.code))

    def test_candidates(self):
        s, c = self.serve([(400, {"error": {"code": "ambiguous_approver", "message": "m", "field": "approvers[0]", "candidates": ["a", "b"]}}, {})])
        with self.assertRaises(AssentError) as caught:
            c.approvals.create("t", approvers=["al"])
        self.assertEqual(["a", "b"], caught.exception.candidates)
        self.assertEqual("approvers[0]", caught.exception.field)

    def test_receipt_conflict_carries_the_receipt(self):
        receipt = {"id": "rcp_1", "decisionTokenId": "dtk_jti", "inputMatches": False, "outcome": "succeeded"}
        recorded = {"id": "rcp_0", "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:01Z", "reportedAt": "2026-01-01T00:00:02Z"}
        s, c = self.serve([(409, {"error": {"code": "input_mismatch", "message": "m", "field": "input"}, "receipt": receipt}, {}),
                           (409, {"error": {"code": "receipt_exists", "message": "m", "field": "decisionToken"}, "receipt": recorded}, {}),
                           err(409, "invalid_state")])
        with self.assertRaises(AssentError) as caught:
            c.receipts.create("tok", {"n": 1}, "succeeded", started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:00:01Z")
        self.assertEqual((409, ErrorCode.INPUT_MISMATCH, "input"), (caught.exception.status, caught.exception.code, caught.exception.field))
        self.assertEqual(("rcp_1", False), (caught.exception.receipt.id, caught.exception.receipt.input_matches))
        self.assertEqual(1, len(s.requests), "a receipt conflict is not retried")
        with self.assertRaises(AssentError) as caught:
            c.receipts.create("tok", {"n": 1}, "failed", started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:00:01Z")
        self.assertIsInstance(caught.exception.receipt, RecordedReceipt)
        self.assertEqual(("rcp_0", "2026-01-01T00:00:02Z"), (caught.exception.receipt.id, caught.exception.receipt.reported_at),
                         "receipt_exists names the token's receipt by its id and times")
        with self.assertRaises(AssentError) as caught:
            c.mandates.revoke("mdt_1")
        self.assertIsNone(caught.exception.receipt, "other errors carry none")

    def test_failure_receipt_cuts_the_message(self):
        from assent.approval import _reported

        receipt = {"id": "rcp_1"}
        s, c = self.serve([(201, receipt, {}), (201, receipt, {}), (201, receipt, {})])
        long = "x" + "\u00e9" * 40000  # two bytes each: an odd cut falls inside one

        def fail(message: str) -> Callable[[], Any]:
            def run() -> Any:
                raise ValueError(message)
            return run

        with self.assertRaises(ValueError) as caught:
            _reported(c, "tok", {"n": 1}, fail(long))
        self.assertEqual(long, str(caught.exception), "the caller gets the error whole")
        with self.assertRaises(ValueError):
            _reported(c, "tok", {"n": 1}, fail("card declined"))
        # A file name that is not UTF-8, as os.fsdecode spells it: a lone
        # surrogate, which a UTF-8 body cannot carry.
        with self.assertRaises(ValueError):
            _reported(c, "tok", {"n": 1}, fail("no such file: caf\udce9.csv"))
        self.assertEqual(3, len(s.requests), "every failure is reported")
        cut, short, odd = (json.loads(r["body"]) for r in s.requests)
        self.assertEqual("no such file: caf?.csv", odd["result"])
        self.assertEqual(("/api/v1/receipts", "failed"), (s.requests[0]["path"], cut["outcome"]))
        marker = "\u2026 [truncated from 80001 bytes]"
        self.assertTrue(cut["result"].endswith(marker), cut["result"][-40:])
        kept = cut["result"][:-len(marker)]
        self.assertTrue(long.startswith(kept), "cut on a character's boundary")
        self.assertTrue(4000 < len(cut["result"].encode("utf-8")) <= 4096, len(cut["result"].encode("utf-8")))
        self.assertEqual("card declined", short["result"], "a short message is kept whole")

    def test_mandate_grant_body(self):
        mandate = {"id": "mdt_1", "status": "active"}
        s, c = self.serve([(201, mandate, {}), (200, mandate, {})])
        import datetime as dt
        until = dt.datetime(2026, 12, 31, tzinfo=dt.timezone.utc)
        self.assertEqual("mdt_1", c.mandates.grant("refund.create", {"count": 10, "window": "day"}, until, agents=["key_1"]).id)
        self.assertEqual({"action": "refund.create", "budget": {"count": 10, "window": "day"}, "expiresAt": "2026-12-31T00:00:00.000000Z",
                          "agents": ["key_1"]}, json.loads(s.requests[0]["body"]))
        c.mandates.revoke("mdt_1")
        self.assertEqual(("POST", "/api/v1/mandates/mdt_1/revoke", b""), (s.requests[1]["method"], s.requests[1]["path"], s.requests[1]["body"]))
        self.assertIn("Idempotency-Key", s.requests[1]["headers"])

    def test_list_follows_cursors(self):
        s, c = self.serve([(200, {"data": [dict(APPROVAL, id="apr_1"), dict(APPROVAL, id="apr_2")], "nextCursor": "c1"}, {}),
                           (200, {"data": [dict(APPROVAL, id="apr_3")], "nextCursor": None}, {})])
        ids = [a.id for a in c.approvals.list(status="pending", limit=2)]
        self.assertEqual(["apr_1", "apr_2", "apr_3"], ids)
        self.assertEqual("/api/v1/approvals?status=pending&limit=2", s.requests[0]["path"])
        self.assertEqual("/api/v1/approvals?status=pending&limit=2&cursor=c1", s.requests[1]["path"])

    def test_wait_survives_drops_and_never_reports_pending(self):
        approved = dict(APPROVAL, status="approved", approvedInput={"amount": 1})
        s, c = self.serve([(200, APPROVAL, {}), "drop", err(429, "rate_limited"), (200, APPROVAL, {}), (200, approved, {})])
        got = c.approvals.wait("apr_1", timeout=30)
        self.assertEqual("approved", got.status)
        self.assertEqual({"amount": 1}, got.approved_input)
        self.assertTrue(all("wait=" in r["path"] for r in s.requests))

    def test_wait_times_out_pending(self):
        s, c = self.serve([(200, APPROVAL, {})] * 50)
        with self.assertRaises(WaitTimeout) as caught:
            c.approvals.wait("apr_1", timeout=0.5)
        self.assertEqual("pending", caught.exception.request.status)

    def test_wait_raises_a_refusal(self):
        s, c = self.serve([err(404, "not_found")])
        with self.assertRaises(AssentError) as caught:
            c.approvals.wait("apr_x", timeout=10)
        self.assertEqual(404, caught.exception.status)

    def test_environment(self):
        import os
        from unittest import mock
        with mock.patch.dict(os.environ, {"ASSENT_BASE_URL": "http://example.test/", "ASSENT_API_KEY": "asnt_agent_env"}):
            c = assent.Client()
        self.assertEqual("http://example.test", c.base_url)
        self.assertEqual("asnt_agent_env", c._transport.api_key)


if __name__ == "__main__":
    unittest.main()
