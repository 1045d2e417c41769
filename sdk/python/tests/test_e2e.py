"""The SDK against a real `assent dev`, started once for this module by the
shared harness (sdk/harness/assent_dev.py; ASSENT_BIN names a built binary).
Skipped when no binary can be had (no Go toolchain and no ASSENT_BIN),
unless ASSENT_REQUIRE_E2E=1."""

import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import unittest
import uuid
from typing import Any, Callable, Dict, List, Optional

import assent
from assent import AssentError, ErrorCode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness"))
from assent_dev import AssentDev  # noqa: E402

DEV: Optional[AssentDev] = None


def setUpModule() -> None:
    global DEV
    if not os.environ.get("ASSENT_BIN") and not shutil.which("go") and not os.path.exists("/usr/local/go/bin/go"):
        if os.environ.get("ASSENT_REQUIRE_E2E") == "1":
            raise RuntimeError("no ASSENT_BIN and no Go toolchain to build assent (ASSENT_REQUIRE_E2E=1)")
        raise unittest.SkipTest("no ASSENT_BIN and no Go toolchain to build assent")
    DEV = AssentDev().start()


def tearDownModule() -> None:
    if DEV is not None:
        DEV.stop()


def dev() -> AssentDev:
    assert DEV is not None
    return DEV


def agent() -> assent.Client:
    return assent.Client(dev().base_url, dev().agent_key)


def person(role_or_email: str = "admin") -> assent.Client:
    for m in dev().members:
        if role_or_email in (m["role"], m["email"]):
            return assent.Client(dev().base_url, m["token"])
    raise LookupError(role_or_email)


def admin() -> assent.Client:
    return assent.Client(dev().base_url, dev().admin_key)


class Receiver:
    """A local HTTP server keeping every POST it receives, raw."""

    def __init__(self) -> None:
        self.received: List[Dict[str, Any]] = []
        self.arrived = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.received.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                receiver.arrived.set()
                self.send_response(204)
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Approvals(unittest.TestCase):
    def test_create_decide_with_correction_wait_and_verify(self):
        client = agent()
        created = client.approvals.create("Refund order 42", {"amount": 120, "currency": "EUR"}, editable_fields=["amount"],
                                          external_id="e2e-" + uuid.uuid4().hex)
        self.assertEqual("pending", created.status)
        results: Dict[str, Any] = {}
        waiter = threading.Thread(target=lambda: results.update(done=client.approvals.wait(created.id, timeout=120)))
        waiter.start()
        time.sleep(0.5)
        decided = person("admin").approvals.decide(created.id, "approve", corrections={"amount": 100}, note="within policy")
        self.assertEqual("approved", decided.status)
        waiter.join(130)
        done = results["done"]
        self.assertEqual("approved", done.status)
        self.assertEqual({"amount": 100, "currency": "EUR"}, done.approved_input)
        self.assertEqual("amount", done.changes[0].field)
        self.assertTrue(done.decision_token)
        claims = client.verify_decision_token(done.decision_token, done.approved_input)
        self.assertEqual(created.id, claims.subject)
        with self.assertRaises(assent.DecisionTokenError) as caught:
            client.verify_decision_token(done.decision_token, created.input)
        self.assertEqual("input", caught.exception.reason)
        # The offline check with the published keys gives the same answer.
        me = client.me.get()
        assent.verify_decision_token(done.decision_token, {"currency": "EUR", "amount": 100.0}, issuer=client.base_url,
                                     organization=me.organization.id, jwks=client.service.decision_keys().raw)

    def test_list_iterates_pages(self):
        client = agent()
        tag = "page-" + uuid.uuid4().hex
        ids = {client.approvals.create("Page %d" % i, {"i": i}, external_id=tag).id for i in range(3)}
        self.assertEqual(ids, {a.id for a in client.approvals.list(external_id=tag, limit=1)})

    def test_question_and_answer_then_reject_and_cancel(self):
        client = agent()
        created = client.approvals.create("Delete the staging database", {"db": "staging"})
        q = person("admin").approvals.ask(created.id, "Is there a backup?")
        answered = client.approvals.answer(created.id, q.question_id, "Yes, from last night")
        self.assertEqual("Yes, from last night", answered.questions[0].answer)
        person("admin").approvals.decide(created.id, "reject", note="not today")
        self.assertEqual("rejected", client.approvals.wait(created.id, timeout=30).status)
        other = client.approvals.create("Cancel me")
        self.assertEqual("cancelled", client.approvals.cancel(other.id).status)

    def test_callback_is_verified(self):
        receiver = Receiver()
        self.addCleanup(receiver.close)
        client = agent()
        created = client.approvals.create("Refund order 43", {"amount": 60}, callback_url=receiver.url + "/callback")
        self.assertTrue(created.callback_secret)
        person("admin").approvals.decide(created.id, "approve")
        self.assertTrue(receiver.arrived.wait(60), "the callback arrives")
        got = receiver.received[0]
        event = assent.verify_webhook(got["body"], got["headers"], created.callback_secret)
        self.assertEqual("approval.approved", event.event)
        self.assertEqual(created.id, event.request_id)
        self.assertEqual("approved", event.data["status"])
        with self.assertRaises(assent.WebhookVerificationError):
            assent.verify_webhook(got["body"] + b" ", got["headers"], created.callback_secret)

    def test_idempotent_retry_creates_once(self):
        client = agent()
        tag = "idem-" + uuid.uuid4().hex
        first = client.approvals.create("Once", {"n": 1}, external_id=tag, idempotency_key=tag)
        again = client.approvals.create("Once", {"n": 1}, external_id=tag, idempotency_key=tag)
        self.assertEqual(first.id, again.id)
        self.assertEqual([first.id], [a.id for a in client.approvals.list(external_id=tag)])

    def test_a_lost_answer_is_retried_under_the_same_key(self):
        proxy = DroppingProxy(dev().base_url)
        self.addCleanup(proxy.close)
        client = assent.Client(proxy.url, dev().agent_key, backoff=0.05)
        tag = "lost-" + uuid.uuid4().hex
        created = client.approvals.create("Lost answer", {"n": 1}, external_id=tag)
        self.assertEqual(2, proxy.posts, "the first answer was dropped and the POST sent again")
        self.assertEqual([created.id], [a.id for a in agent().approvals.list(external_id=tag)])


class Proxy:
    """Forwards every request to the server. alter(command, path, data)
    sees each answer's body after the server acted: it returns the body to
    send (changed or not), or None to drop the connection unanswered, as a
    network failure would."""

    def __init__(self, upstream: str, alter: Callable[[str, str, bytes], Optional[bytes]]):
        import urllib.error
        import urllib.request

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                req = urllib.request.Request(upstream + self.path, data=body, headers=headers, method=self.command)
                try:
                    resp = urllib.request.urlopen(req, timeout=90)
                except urllib.error.HTTPError as e:
                    resp = e
                data = alter(self.command, self.path, resp.read())
                if data is None:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self.send_response(resp.status if hasattr(resp, "status") else resp.code)
                for k, v in resp.headers.items():
                    if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class DroppingProxy(Proxy):
    """Drops the answer to the first POST after the server has acted on it."""

    def __init__(self, upstream: str):
        self.posts = 0
        super().__init__(upstream, self._drop_first_post)

    def _drop_first_post(self, command: str, path: str, data: bytes) -> Optional[bytes]:
        if command == "POST":
            self.posts += 1
            if self.posts == 1:
                return None
        return data


class Collections(unittest.TestCase):
    def test_collection_answered(self):
        client = agent()
        col = client.collections.create("Vendor details", [
            {"id": "vendor", "prompt": "Which vendor?", "kind": "choice", "options": ["Acme", "Globex"]},
            {"id": "budget", "prompt": "Budget in EUR", "kind": "number"},
        ], ["mia@example.com"])
        self.assertEqual("open", col.status)
        mia = person("mia@example.com")
        self.assertIn(col.id, [c.id for c in mia.inbox.list("collection")])
        # A draft unless submit=True, as in the API.
        draft = mia.collections.reply(col.id, {"vendor": "Globex", "budget": 1})
        self.assertEqual("open", draft.status)
        self.assertEqual("open", client.collections.get(col.id).status)
        self.assertEqual([], client.collections.get(col.id).replies or [])
        mia.collections.reply(col.id, {"vendor": "Acme", "budget": 12000}, submit=True)
        done = client.collections.wait(col.id, timeout=60)
        self.assertEqual("complete", done.status)
        self.assertEqual({"vendor": "Acme", "budget": 12000}, done.replies[0].answers)


class Inbox(unittest.TestCase):
    def test_every_kind_without_a_kind(self):
        client, mia = agent(), person("mia@example.com")
        a = client.approvals.create("Inbox approval", approvers=["mia@example.com"])
        col = client.collections.create("Inbox collection", [{"id": "ok", "prompt": "Ok?", "kind": "boolean"}], ["mia@example.com"])
        slug = "sdk/py-inbox-" + uuid.uuid4().hex[:8]
        client.reports.create("Inbox report", content="<h1>r</h1>", slug=slug, audience=["mia@example.com"])
        rv = client.reviews.create("Inbox review", slug, ["mia@example.com"])
        items = list(mia.inbox.list(limit=200))
        self.assertTrue(all(isinstance(i, assent.models.InboxItem) for i in items))
        by_id = {getattr(i, i.kind).id: i.kind for i in items}
        self.assertEqual("approval", by_id.get(a.id))
        self.assertEqual("collection", by_id.get(col.id))
        self.assertEqual("review", by_id.get(rv.id))
        # With a kind, that kind's list, typed as before.
        collections = list(mia.inbox.list("collection"))
        self.assertTrue(all(isinstance(c, assent.models.Collection) for c in collections))
        self.assertIn(col.id, [c.id for c in collections])
        self.assertNotIn(a.id, [c.id for c in collections])
        with self.assertRaises(ValueError):
            next(mia.inbox.list("approvals"))
        # What needs attention first: a critical approval made last comes
        # before the medium one made first.
        critical = client.approvals.create("Inbox critical", approvers=["mia@example.com"], risk="critical")
        order = [getattr(i, i.kind).id for i in mia.inbox.list(order="attention", limit=200)]
        self.assertLess(order.index(critical.id), order.index(a.id))
        order = [getattr(i, i.kind).id for i in mia.inbox.list(order="newest", limit=200)]
        self.assertLess(order.index(critical.id), order.index(col.id))
        self.assertLess(order.index(col.id), order.index(a.id))


class Reports(unittest.TestCase):
    def test_publish_versions_and_review(self):
        client = agent()
        slug = "sdk/e2e-" + uuid.uuid4().hex[:8]
        site = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, site, True)
        with open(os.path.join(site, "index.html"), "w") as f:
            f.write('<!doctype html><title>Q3</title><link rel="stylesheet" href="style.css"><h1>Q3 review</h1><p>Revenue grew.</p>')
        with open(os.path.join(site, "style.css"), "w") as f:
            f.write("h1 { color: #0550ae }")
        report = client.reports.create("Q3 review", path=site, slug=slug, living=True, audience=["mia@example.com"])
        self.assertEqual(1, report.live_version)
        self.assertEqual(2, report.version.files)
        v2 = client.reports.publish(slug, content="<!doctype html><title>Q3</title><h1>Q3, revised</h1><p>Revenue grew a lot.</p>",
                                    expected_version=1, change_summary="September")
        self.assertEqual(2, v2.live_version)
        with self.assertRaises(AssentError) as caught:
            client.reports.publish(slug, content="<h1>late</h1>", expected_version=1)
        self.assertEqual((409, ErrorCode.VERSION_CONFLICT), (caught.exception.status, caught.exception.code))
        big = "<!doctype html><title>Big</title>" + "<p>" + "x" * 2_000_000 + "</p>"
        v3 = client.reports.publish(slug, content=big)  # through an upload ticket
        self.assertEqual(3, v3.live_version)
        self.assertEqual(2, client.reports.rollback(slug, 2).live_version)
        self.assertEqual([3, 2, 1], [v.version for v in client.reports.versions(slug).data])

        review = client.reviews.create("Check Q3", slug, ["mia@example.com"], instructions="Are the figures right?")
        self.assertEqual("open", review.status)
        person("mia@example.com").reviews.verdict(review.id, "approved", note="Figures match")
        done = client.reviews.wait(review.id, timeout=60)
        self.assertEqual("approved", done.status)

        client.reports.put_dataset(slug, "kpis", {"revenue": 1.5e6, "rows": [1, 2]})
        self.assertEqual({"revenue": 1.5e6, "rows": [1, 2]}, client.reports.get_dataset(slug, "kpis"))
        self.assertTrue(client.reports.archive(slug).archived)
        self.assertFalse(client.reports.archive(slug, False).archived)
        self.assertTrue(client.reports.templates().data)


class Gate(unittest.TestCase):
    def test_require_approval_through_the_gate_and_directly(self):
        name = "refund.e2e" + uuid.uuid4().hex[:6]
        admin().admin.actions.create(name, {"type": "object", "required": ["amount", "currency"], "properties": {
            "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000}, "currency": {"enum": ["EUR", "USD"]}}},
            description="Refund a customer", editable_fields=["amount"],
            policy=[{"name": "small", "condition": "input.amount <= 50", "outcome": "allow"},
                    {"name": "large", "condition": "input.amount > 500", "outcome": "deny", "reason": "too large"}])
        ran: List[Dict[str, Any]] = []

        @assent.require_approval("Refund {amount} {currency}", action=name, client=agent(), timeout=60)
        def refund(amount: float, currency: str) -> str:
            ran.append({"amount": amount, "currency": currency})
            return "refunded %s %s" % (amount, currency)

        self.assertEqual("refunded 20 EUR", refund(20, "EUR"))  # allowed by the policy
        with self.assertRaises(AssentError) as caught:
            refund(900, currency="EUR")
        self.assertEqual((403, ErrorCode.GATE_DENIED), (caught.exception.status, caught.exception.code))

        decider = DecideWhenAsked(person("admin"), {"amount": 120, "currency": "EUR"}, corrections={"amount": 100})
        self.assertEqual("refunded 100 EUR", refund(120, "EUR"))
        decider.join()
        self.assertEqual([{"amount": 20, "currency": "EUR"}, {"amount": 100, "currency": "EUR"}], ran)

    def test_require_approval_runs_only_approved(self):
        ran: List[Any] = []

        @assent.require_approval("Email {to}", editable_fields=["subject"], client=agent(), timeout=60)
        def send(to: str, subject: str) -> None:
            ran.append((to, subject))

        decider = DecideWhenAsked(person("admin"), {"to": "ada@example.com", "subject": "Helo"}, corrections={"subject": "Hello"})
        send("ada@example.com", "Helo")
        decider.join()
        self.assertEqual([("ada@example.com", "Hello")], ran)

        decider = DecideWhenAsked(person("admin"), {"to": "ada@example.com", "subject": "Spam"}, decision="reject")
        with self.assertRaises(assent.ApprovalDenied) as caught:
            send("ada@example.com", "Spam")
        decider.join()
        self.assertEqual("rejected", caught.exception.status)
        self.assertEqual(1, len(ran))

        # Each run is reported, a failed one with its error; the caller gets
        # the function's own exception.
        to = "ops+%s@example.com" % uuid.uuid4().hex[:6]

        @assent.require_approval("Email {to}", client=agent(), timeout=60)
        def boom(to: str) -> None:
            raise RuntimeError("smtp down")

        decider = DecideWhenAsked(person("admin"), {"to": to})
        with self.assertRaisesRegex(RuntimeError, "smtp down"):
            boom(to)
        decider.join()
        reported = next(a for a in agent().approvals.list(executed=True) if (a.input or {}).get("to") == to)
        self.assertEqual("failed", reported.execution.outcome)
        self.assertTrue(reported.execution.input_matches)


class TamperingProxy(Proxy):
    """Changes approvedInput in the reads of settled approvals, as a
    compromised path between agent and instance would."""

    def __init__(self, upstream: str, change: Dict[str, Any]):
        self.change = change
        self.tampered = False
        super().__init__(upstream, self._tamper)

    def _tamper(self, command: str, path: str, data: bytes) -> Optional[bytes]:
        if command == "GET" and path.startswith("/api/v1/approvals/"):
            read = json.loads(data)
            if read.get("approvedInput"):
                read["approvedInput"].update(self.change)
                self.tampered = True
                return json.dumps(read).encode()
        return data


class Refusals(unittest.TestCase):
    def test_require_approval_refuses_an_input_nobody_approved(self):
        proxy = TamperingProxy(dev().base_url, {"amount": 5000})
        self.addCleanup(proxy.close)
        client = assent.Client(proxy.url, dev().agent_key, issuer=dev().base_url)
        ran: List[Any] = []

        @assent.require_approval("Refund {amount}", client=client, timeout=60)
        def refund(amount: int, currency: str) -> None:
            ran.append(amount)

        decider = DecideWhenAsked(person("admin"), {"amount": 70, "currency": "USD"})
        with self.assertRaises(assent.DecisionTokenError) as caught:
            refund(70, "USD")
        decider.join()
        self.assertTrue(proxy.tampered)
        self.assertEqual("input", caught.exception.reason)
        self.assertEqual([], ran, "the function never ran")


class DecideWhenAsked:
    """In the background, decides the approval of input once the person's inbox shows it."""

    def __init__(self, client: assent.Client, input: Dict[str, Any], decision: str = "approve", corrections: Optional[Dict[str, Any]] = None):
        self.client, self.input, self.decision, self.corrections = client, input, decision, corrections
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for a in self.client.inbox.list("approval"):
                if a.input != self.input:
                    continue
                self.client.approvals.decide(a.id, self.decision, corrections=self.corrections if self.decision == "approve" else None,
                                             note="decided by the e2e test")
                return
            time.sleep(0.2)

    def join(self) -> None:
        self.thread.join(70)


class Errors(unittest.TestCase):
    def test_one_case_per_family(self):
        client = agent()
        with self.assertRaises(AssentError) as caught:
            client.approvals.create("")
        self.assertEqual((400, ErrorCode.INVALID_REQUEST, "title"), (caught.exception.status, caught.exception.code, caught.exception.field))

        with self.assertRaises(AssentError) as caught:
            assent.Client(dev().base_url, "asnt_agent_" + "x" * 52).approvals.get("apr_x")
        self.assertEqual((401, ErrorCode.UNAUTHORIZED), (caught.exception.status, caught.exception.code))

        with self.assertRaises(AssentError) as caught:
            list(client.admin.members.list())
        self.assertEqual(403, caught.exception.status)
        self.assertIn(caught.exception.code, (ErrorCode.FORBIDDEN, ErrorCode.INSUFFICIENT_SCOPE))

        with self.assertRaises(AssentError) as caught:
            client.approvals.get("apr_01jgx5z7m3q8r2t4v6w8y0a2c4")
        self.assertEqual((404, ErrorCode.NOT_FOUND), (caught.exception.status, caught.exception.code))

        created = client.approvals.create("Decide twice")
        person("admin").approvals.decide(created.id, "approve")
        with self.assertRaises(AssentError) as caught:
            person("admin").approvals.decide(created.id, "reject")
        self.assertEqual(409, caught.exception.status)

        key = "reused-" + uuid.uuid4().hex
        client.approvals.create("First body", idempotency_key=key)
        with self.assertRaises(AssentError) as caught:
            client.approvals.create("Another body", idempotency_key=key)
        self.assertEqual((422, ErrorCode.IDEMPOTENCY_KEY_REUSED), (caught.exception.status, caught.exception.code))

    def test_ambiguous_or_unknown_names_carry_candidates(self):
        with self.assertRaises(AssentError) as caught:
            agent().approvals.create("Who?", approvers=["nobody-" + uuid.uuid4().hex[:6] + "@example.com"])
        self.assertEqual(ErrorCode.UNKNOWN_APPROVER, caught.exception.code)
        self.assertTrue(caught.exception.field.startswith("approvers"))


class Surface(unittest.TestCase):
    def test_reads_across_resources(self):
        client = agent()
        self.assertEqual("agent", client.me.get().kind)
        self.assertEqual("ready", client.service.readiness().status)
        self.assertIn("paths", client.service.openapi())
        flow = client.flows.create("SDK flow")
        client.approvals.create("In a flow", flow_id=flow.id)
        self.assertEqual(flow.id, client.flows.get(flow.id).id)
        evidence = client.flows.evidence(flow.id)
        self.assertTrue(evidence.digest)
        self.assertTrue(client.flows.evidence(flow.id, format="csv").startswith(b""))
        client.flows.complete(flow.id)
        org = admin().admin.organization.get()
        self.assertEqual(dev().organization_id, org.id)
        self.assertEqual(5, len(list(admin().admin.members.list(limit=2))))


if __name__ == "__main__":
    unittest.main()
