"""Every operation of the document, called through the SDK against a real
`assent dev` at least once, and its answer decoded into the model the
document names. A new operation without a call here fails
test_every_operation_was_called."""

import base64
import dataclasses
import datetime as dt
import unittest
import uuid
from typing import Set

import assent
from assent import AssentError, ErrorCode
from assent._http import Transport
from assent._model import Model
from assent.models import OPERATIONS

from tests import test_e2e
from tests.test_e2e import Receiver, admin, agent, person

CALLED: Set[str] = set()
# Properties the server sent that the document's schema lacks.
UNKNOWN: Set[str] = set()
# Not called by a client: Slack signs its requests with its own secret,
# Prometheus scrapes metrics.
NOT_CALLED = {"slackInteractions", "metrics"}

_request = Transport.request


def _recording(self, op_id, *args, **kwargs):
    CALLED.add(op_id)
    result = _request(self, op_id, *args, **kwargs)
    _unknown(op_id, result[1])
    return result


def _unknown(op_id, value) -> None:
    if isinstance(value, Model):
        if getattr(value, "_closed", False):
            UNKNOWN.update("%s: %s.%s" % (op_id, type(value).__name__, k) for k in getattr(value, "extra", {}))
        for f in dataclasses.fields(value):
            _unknown(op_id, getattr(value, f.name))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _unknown(op_id, v)


def setUpModule() -> None:
    Transport.request = _recording  # type: ignore[assignment]
    test_e2e.setUpModule()


def tearDownModule() -> None:
    Transport.request = _request  # type: ignore[assignment]
    test_e2e.tearDownModule()


PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==")


class Tour(unittest.TestCase):
    def test_0_requests(self):
        c, decider = agent(), person("admin")
        a = c.approvals.create("Tour approval", {"n": 1}, editable_fields=["n"])
        self.assertIn(a.id, [x.id for x in decider.inbox.list("approval")])
        self.assertIn(a.id, [x.approval.id for x in decider.inbox.list() if x.kind == "approval"])
        q = decider.approvals.ask(a.id, "Why?")
        c.approvals.answer(a.id, q.question_id, "Because")
        decider.approvals.decide(a.id, "approve", corrections={"n": 2})
        self.assertEqual({"n": 2}, c.approvals.wait(a.id, 30).approved_input)
        self.assertEqual(a.id, c.approvals.get(a.id).id)
        self.assertIn(a.id, [x.id for x in c.approvals.list(status="approved")])
        done = c.approvals.get(a.id)
        now = dt.datetime.now(dt.timezone.utc)
        receipt = c.receipts.create(done.decision_token, done.approved_input, "succeeded", started_at=now, finished_at=now,
                                    result={"sent": True})
        self.assertTrue(receipt.input_matches)
        self.assertEqual(a.id, receipt.approval_id)
        self.assertEqual(receipt.id, c.approvals.get(a.id).execution.receipt_id)
        with self.assertRaises(AssentError) as caught:
            c.receipts.create(done.decision_token, done.approved_input, "succeeded", started_at=now, finished_at=now)
        self.assertEqual((409, ErrorCode.RECEIPT_EXISTS), (caught.exception.status, caught.exception.code))
        self.assertEqual(receipt.id, caught.exception.receipt.id, "the error carries the token's receipt")
        self.assertIn(a.id, [x.id for x in c.approvals.list(executed=True)])
        self.assertEqual("cancelled", c.approvals.cancel(c.approvals.create("Tour cancel").id).status)

        col = c.collections.create("Tour reply", [{"id": "ok", "prompt": "Ok?", "kind": "boolean"}], ["mia@example.com"])
        person("mia@example.com").collections.reply(col.id, {"ok": True}, submit=True)
        self.assertEqual({"ok": True}, c.collections.wait(col.id, 30).replies[0].answers)

        slug = "tour/v-" + uuid.uuid4().hex[:8]
        c.reports.create("Tour versions", content="<h1>one</h1>", slug=slug, audience=["mia@example.com"])
        ticket = c.reports.upload(b"<h1>two</h1>", "text/html")
        self.assertEqual(2, c.request("publishVersion", {"idOrSlug": slug}, body={"uploadId": ticket.upload_id}).live_version)
        self.assertEqual(3, c.reports.publish(slug, content="<h1>three</h1>", expected_version=2).live_version)
        self.assertEqual(1, c.reports.rollback(slug, 1).live_version)
        self.assertEqual(3, len(c.reports.versions(slug).data))
        c.reports.put_dataset(slug, "d", {"x": 1})
        self.assertEqual({"x": 1}, c.reports.get_dataset(slug, "d"))
        review = c.reviews.create("Tour verdict", slug, ["mia@example.com"])
        person("mia@example.com").reviews.verdict(review.id, "changes_requested", note="Fix the title")
        self.assertEqual("changes_requested", c.reviews.wait(review.id, 30).status)
        self.assertTrue(c.reports.archive(slug).archived)

        flow = c.flows.create("Tour flow")
        c.approvals.create("Tour in a flow", flow_id=flow.id)
        self.assertEqual(flow.id, c.flows.get(flow.id).id)
        self.assertTrue(c.flows.evidence(flow.id).timeline)
        c.flows.complete(flow.id)

    def test_1_service_and_caller(self):
        c = agent()
        self.assertEqual("ok", c.service.health()["status"])
        self.assertEqual("ready", c.service.readiness().status)
        self.assertEqual("3.1.0", c.service.openapi()["openapi"])
        self.assertTrue(c.service.decision_keys().keys[0].kid.startswith("dtk_"))
        self.assertTrue(c.service.evidence_keys().keys)
        self.assertTrue(c.service.resource_metadata().resource.endswith("/mcp"))
        self.assertTrue(c.service.mcp_resource_metadata().resource.endswith("/mcp"))
        mia = person("mia@example.com")
        self.assertEqual("member", mia.me.get().kind)
        token = mia.me.create_token(["approvals:read"])
        self.assertTrue(token.token.startswith("asnt_member_"))
        self.assertIn(token.id, [k.id for k in mia.me.list_tokens()])
        self.assertIsNotNone(mia.me.revoke_token(token.id).revoked_at)
        # A delegation beginning tomorrow, so no other tour request asks Max
        # for Maya; then ended.
        maya, max_ = person("maya@example.com"), person("max@example.com")
        start = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
        mine = maya.me.set_delegation("max@example.com", start + dt.timedelta(days=1), from_=start, note="Tour")
        self.assertEqual("max@example.com", mine.delegation.delegate.email)
        self.assertFalse(mine.delegation.active)
        self.assertEqual(1, len(max_.me.get_delegation().delegated_to_me))
        maya.me.end_delegation()
        self.assertIsNone(maya.me.get_delegation().delegation)

    def test_2_reports_comments_sharing(self):
        c = agent()
        slug = "tour/r-" + uuid.uuid4().hex[:8]
        page = "<!doctype html><title>Tour</title><h1>Tour</h1><p>The quarter closed above plan.</p>"
        report = c.reports.create("Tour", files={"index.html": page}, slug=slug, living=True)
        self.assertEqual(slug, report.slug)
        self.assertEqual(slug, c.reports.get(report.id).slug)
        self.assertIn(report.id, [r.id for r in c.reports.list()])
        self.assertEqual("confidential", c.reports.update(slug, classification="confidential").classification)
        shared = c.reports.share(slug, ["mia@example.com", "Operations"])
        self.assertTrue(shared.audience)
        self.assertTrue(c.audiences.resolve(["mia@example.com"]).audience)
        c.reports.unshare(slug, ["Operations"])
        sent = c.reports.send(slug, ["mia@example.com"], note="for you")
        self.assertTrue(sent.recipients)
        self.assertIsNotNone(c.reports.analytics(slug).total_views)
        self.assertIn(report.id, [r.report_id for r in c.reports.organization_analytics()])
        c.reports.put_dataset(slug, "kpis", [1, 2, 3])
        self.assertEqual(["kpis"], [d.name for d in c.reports.datasets(slug).data])
        c.reports.delete_dataset(slug, "kpis")
        template = c.reports.templates().data[0]
        self.assertTrue(c.reports.copy(template.id, slug="tour/t-" + uuid.uuid4().hex[:8]).id)
        self.assertTrue(c.reports.copy(slug, title="Tour copy").id)
        self.assertEqual(b"", c.reports.evidence(slug, format="csv")[:0])
        self.assertTrue(c.reports.evidence(slug).digest)

        mia = person("mia@example.com")
        thread = mia.comments.post(slug, "Above plan by how much?", quote="closed above plan",
                                   images=[{"data": base64.b64encode(PNG).decode()}])
        self.assertEqual(1, len(c.comments.list(slug).data))
        image = thread.comments[0].images[0]
        self.assertEqual(PNG, c.comments.image(slug, image.sha256))
        reply = mia.comments.post(slug, "Never mind", thread_id=thread.id)
        mia.comments.retract(slug, reply.comments[-1].id)
        self.assertIn(thread.id, [t.id for t in c.comments.open()])
        brief = c.comments.revision_brief(slug)
        self.assertIn("closed above plan", brief.text)
        self.assertEqual("resolved", mia.comments.resolve(thread.id, "answered").status)

        schedule = c.schedules.create(slug, every="24h", note="daily")
        self.assertEqual(schedule.id, c.schedules.get(schedule.id).id)
        self.assertIn(schedule.id, [s.id for s in c.schedules.list(report_id=report.id)])
        self.assertTrue(c.schedules.pause(schedule.id).paused)
        self.assertFalse(c.schedules.resume(schedule.id).paused)
        c.schedules.delete(schedule.id)

        held = c.reports.publish(slug, content='<form action="https://collect.example.net/login"><input type="password" name="p"></form>')
        self.assertEqual("held", held.version.status)
        ids = [r.version.id for r in admin().admin.held_versions.list().data]
        self.assertIn(held.version.id, ids)
        admin().admin.held_versions.decline(held.version.id)
        again = c.reports.publish(slug, content='<form action="https://collect.example.net/x"><input type="password" name="q"></form>')
        admin().admin.held_versions.release(again.version.id)

        review = c.reviews.create("Tour review", slug, ["mia@example.com"])
        self.assertIn(review.id, [r.id for r in mia.inbox.list("review")])
        self.assertIn(review.id, [r.id for r in c.reviews.list(report_id=report.id)])
        self.assertEqual(review.id, c.reviews.get(review.id).id)
        self.assertEqual("cancelled", c.reviews.cancel(review.id).status)

    def test_3_collections_flows_gate(self):
        c = agent()
        flow = c.flows.create("Tour flow", external_id="tour")
        col = c.collections.create("Tour question", [{"prompt": "Ok?", "kind": "boolean"}], ["mia@example.com"], flow_id=flow.id)
        self.assertEqual(col.id, c.collections.get(col.id).id)
        self.assertIn(col.id, [x.id for x in c.collections.list(flow_id=flow.id)])
        self.assertEqual("cancelled", c.collections.cancel(col.id).status)
        c.flows.cancel(flow.id)
        with self.assertRaises(AssentError) as caught:
            c.gate.check("not.registered", {})
        self.assertEqual(404, caught.exception.status)

        # A standing mandate: no rule of the action's decides, so its checks
        # ask the owners and administrators, and the demo administrator may
        # allow them ahead.
        action = admin().admin.actions.create("tour.m" + uuid.uuid4().hex[:6], {"type": "object", "properties": {"amount": {"type": "number"}}})
        granter = person("admin")
        until = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
        mandate = granter.mandates.grant(action.name, {"count": 2, "sum": {"field": "amount", "max": 100}, "window": "day"}, until, note="Tour")
        self.assertEqual("active", mandate.status)
        allowed = c.gate.check(action.name, {"amount": 30})
        self.assertEqual(("allowed", mandate.id), (allowed.decision, allowed.mandate_id))
        self.assertEqual(mandate.id, c.verify_decision_token(allowed.decision_token, {"amount": 30}, action=action.name).mandate)
        now = dt.datetime.now(dt.timezone.utc)
        with self.assertRaises(AssentError) as caught:
            c.receipts.create(allowed.decision_token, {"amount": 31}, "succeeded", started_at=now, finished_at=now)
        self.assertEqual((409, ErrorCode.INPUT_MISMATCH), (caught.exception.status, caught.exception.code))
        self.assertFalse(caught.exception.receipt.input_matches, "recorded, and carried by the error")
        self.assertIn(mandate.id, [x.id for x in granter.mandates.list(live=True)])
        self.assertEqual((1, 70), (granter.mandates.get(mandate.id).uses, granter.mandates.get(mandate.id).remaining.sum))
        self.assertEqual("revoked", granter.mandates.revoke(mandate.id).status)
        asked = c.gate.check(action.name, {"amount": 30})
        self.assertEqual("approval_required", asked.decision, "revoked: the next check asks a person")
        c.approvals.cancel(asked.approval.id)

    def test_4_admin(self):
        a = admin().admin
        org = a.organization.get()
        self.assertEqual(org.name, a.organization.update(name=org.name).name)
        email = "tour-%s@example.com" % uuid.uuid4().hex[:6]
        member = a.members.create(email, name="Tour", role="member")
        self.assertIn(member.id, [m.id for m in a.members.list()])
        self.assertEqual("Tour Two", a.members.update(member.id, name="Tour Two").name)
        self.assertTrue(a.members.create_token(member.id).token)
        team = a.teams.create("tour-" + uuid.uuid4().hex[:6], members=[email])
        self.assertIn(team.id, [t.id for t in a.teams.list()])
        a.teams.update(team.id, members=[])
        a.teams.delete(team.id)
        guest = a.guests.create("guest-%s@example.net" % uuid.uuid4().hex[:6], name="G")
        self.assertIn(guest.id, [g.id for g in a.guests.list()])
        self.assertEqual("G2", a.guests.update(guest.id, name="G2").name)
        a.guests.remove(guest.id)
        key = a.keys.create("tour", "agent", scopes=["approvals:read"])
        self.assertTrue(key.key.startswith("asnt_agent_"))
        self.assertIn(key.id, [k.id for k in a.keys.list()])
        self.assertTrue(a.keys.revoke(key.id).revoked_at)
        rule = a.rules.create("Two for critical " + uuid.uuid4().hex[:4], "approval", condition='request.risk == "critical"', required_approvals=2)
        self.assertIn(rule.id, [r.id for r in a.rules.list()])
        self.assertFalse(a.rules.update(rule.id, enabled=False).enabled)
        a.rules.delete(rule.id)
        action = a.actions.create("tour." + uuid.uuid4().hex[:6], {"type": "object"})
        self.assertIn(action.id, [x.id for x in a.actions.list()])
        self.assertEqual(action.id, a.actions.get(action.id).id)
        self.assertEqual("changed", a.actions.update(action.id, action.name, {"type": "object"}, description="changed").description)
        a.actions.delete(action.id)
        a.slack.put(signing_secret="8f742231b10e8888abcd99yyyzzz85a5", bot_token="xoxb-1234-5678-abcdefghijkl", channel="C0123ABCD")
        self.assertEqual("C0123ABCD", a.slack.get().channel)
        self.assertTrue(a.slack.manifest().display_information)
        a.slack.delete()

        receiver = Receiver()
        self.addCleanup(receiver.close)
        screen = a.model_screen.put(receiver.url + "/v1/chat/completions", "tour-model", api_key="sk-tour")
        self.assertTrue(screen.enabled and screen.api_key_set)
        self.assertEqual("tour-model", a.model_screen.get().model)
        a.model_screen.delete()
        self.assertFalse(a.model_screen.get().enabled)
        hook = a.webhooks.create(receiver.url + "/hook", events=["approval.approved"])
        self.assertTrue(hook.secret)
        self.assertEqual(hook.id, a.webhooks.get(hook.id).id)
        self.assertIn(hook.id, [w.id for w in a.webhooks.list()])
        self.assertTrue(a.webhooks.test(hook.id).delivered)
        test = receiver.received[-1]
        self.assertTrue(assent.verify_webhook(test["body"], test["headers"], hook.secret).test)
        created = agent().approvals.create("Hooked")
        person("admin").approvals.decide(created.id, "approve")
        deadline = dt.datetime.now() + dt.timedelta(seconds=60)
        deliveries = []
        while dt.datetime.now() < deadline:
            deliveries = [d for d in a.webhooks.deliveries(hook.id) if d.status == "delivered"]
            if deliveries:
                break
        self.assertTrue(deliveries)
        self.assertEqual(deliveries[0].id, a.deliveries.get(deliveries[0].id).id)
        a.deliveries.resend(deliveries[0].id)
        self.assertEqual(0, a.webhooks.recover(hook.id, dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).recovered)
        rotated = a.webhooks.rotate_secret(hook.id)
        self.assertNotEqual(hook.secret, rotated.secret)
        self.assertFalse(a.webhooks.update(hook.id, enabled=False).enabled)
        a.webhooks.delete(hook.id)

    def test_9_every_operation_was_called(self):
        missing = sorted(set(OPERATIONS) - CALLED - NOT_CALLED)
        self.assertEqual([], missing, "operations no test called through the SDK")
        self.assertEqual([], sorted(UNKNOWN), "properties the server sent that the document lacks")


if __name__ == "__main__":
    unittest.main()
