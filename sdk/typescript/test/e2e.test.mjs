// The SDK against a real `assent dev`, started once for this file by the
// shared harness.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { Assent, AssentError, ErrorCode, ApprovalDenied, DecisionTokenError, WebhookVerificationError, WaitTimeout, requireApproval, verifyWebhook, verifyDecisionToken } from "../dist/index.js";
import { startDev, decideWhenAsked, devTest } from "./harness.mjs";

let dev;
before(async () => {
  dev = await startDev();
});
after(async () => {
  await dev?.stop();
});

const tag = (p) => `${p}-${randomUUID()}`;

/** A local HTTP server answering requests with handle(req, body, res). */
async function serve(handle) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => handle(req, Buffer.concat(chunks), res));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

/** Forwards to the server; change(req, status, body) may alter or drop (return null) an answer. */
function proxy(change) {
  return serve(async (req, body, res) => {
    const headers = { ...req.headers };
    delete headers.host;
    delete headers["content-length"];
    delete headers.connection;
    const up = await fetch(dev.baseUrl + req.url, { method: req.method, headers, body: body.length ? body : undefined });
    let data = Buffer.from(await up.arrayBuffer());
    const changed = change(req, up.status, data);
    if (changed === null) {
      req.socket.destroy();
      return;
    }
    if (changed !== undefined) data = changed;
    res.writeHead(up.status, { "Content-Type": up.headers.get("content-type") ?? "application/json", "Content-Length": data.length });
    res.end(data);
  });
}

devTest("create, a demo member decides with a correction, wait, approvedInput and a verified decision token", async () => {
  const client = dev.agent();
  const created = await client.approvals.create({ title: "Refund order 42", input: { amount: 120, currency: "EUR" }, editableFields: ["amount"], externalId: tag("e2e") });
  assert.equal(created.status, "pending");
  assert.ok(Date.parse(created.expiresAt) - Date.now() > 23 * 3600 * 1000, "expiresIn defaults to one day");
  const waiting = client.approvals.wait(created.id, { timeout: 120 });
  await new Promise((r) => setTimeout(r, 500));
  const decided = await dev.person("admin").approvals.decide(created.id, { decision: "approve", corrections: { amount: 100 }, note: "within policy" });
  assert.equal(decided.status, "approved");
  const done = await waiting;
  assert.equal(done.status, "approved");
  assert.deepEqual(done.approvedInput, { amount: 100, currency: "EUR" });
  assert.equal(done.changes[0].field, "amount");
  const claims = await client.verifyDecisionToken(done.decisionToken, done.approvedInput);
  assert.equal(claims.subject, created.id);
  await assert.rejects(client.verifyDecisionToken(done.decisionToken, created.input), (e) => e instanceof DecisionTokenError && e.reason === "input");
  // Offline, with the published keys, in another key order and spelling.
  const me = await client.me.get();
  await verifyDecisionToken(done.decisionToken, { currency: "EUR", amount: 100.0 }, { issuer: client.baseUrl, organization: me.organization.id, jwks: await client.service.decisionKeys() });
});

devTest("wait never reports a pending approval as settled", async () => {
  const client = dev.agent();
  const created = await client.approvals.create({ title: "Nobody decides" });
  await assert.rejects(client.approvals.wait(created.id, { timeout: 1.5 }), (e) => e instanceof WaitTimeout && e.request.status === "pending");
});

devTest("list iterates every page", async () => {
  const client = dev.agent();
  const t = tag("page");
  const ids = new Set();
  for (let i = 0; i < 3; i++) ids.add((await client.approvals.create({ title: `Page ${i}`, input: { i }, externalId: t })).id);
  const seen = new Set();
  for await (const a of client.approvals.list({ externalId: t, limit: 1 })) seen.add(a.id);
  assert.deepEqual(seen, ids);
});

devTest("question and answer, reject, cancel", async () => {
  const client = dev.agent();
  const created = await client.approvals.create({ title: "Delete the staging database", input: { db: "staging" } });
  const q = await dev.person("admin").approvals.ask(created.id, "Is there a backup?");
  const answered = await client.approvals.answer(created.id, q.questionId, "Yes, from last night");
  assert.equal(answered.questions[0].answer, "Yes, from last night");
  await dev.person("admin").approvals.decide(created.id, { decision: "reject", note: "not today" });
  assert.equal((await client.approvals.wait(created.id, { timeout: 30 })).status, "rejected");
  const other = await client.approvals.create({ title: "Cancel me" });
  assert.equal((await client.approvals.cancel(other.id)).status, "cancelled");
});

devTest("a real callback is verified by verifyWebhook", async () => {
  let resolve;
  const arrived = new Promise((r) => (resolve = r));
  const receiver = await serve((req, body, res) => {
    resolve({ headers: req.headers, body });
    res.writeHead(204).end();
  });
  try {
    const client = dev.agent();
    const created = await client.approvals.create({ title: "Refund order 43", input: { amount: 60 }, callbackUrl: receiver.url + "/callback" });
    assert.ok(created.callbackSecret);
    await dev.person("admin").approvals.decide(created.id, { decision: "approve" });
    const got = await Promise.race([arrived, new Promise((_, rej) => setTimeout(() => rej(new Error("no callback in 60 s")), 60_000))]);
    const event = verifyWebhook(got.body, got.headers, created.callbackSecret);
    assert.equal(event.event, "approval.approved");
    assert.equal(event.requestId, created.id);
    assert.equal(event.data.status, "approved");
    assert.throws(() => verifyWebhook(Buffer.concat([got.body, Buffer.from(" ")]), got.headers, created.callbackSecret), WebhookVerificationError);
  } finally {
    await receiver.close();
  }
});

devTest("an idempotent retry creates once", async () => {
  const client = dev.agent();
  const t = tag("idem");
  const first = await client.approvals.create({ title: "Once", input: { n: 1 }, externalId: t, idempotencyKey: t });
  const again = await client.approvals.create({ title: "Once", input: { n: 1 }, externalId: t, idempotencyKey: t });
  assert.equal(again.id, first.id);
  const all = [];
  for await (const a of client.approvals.list({ externalId: t })) all.push(a.id);
  assert.deepEqual(all, [first.id]);
});

devTest("a lost answer is retried under the same key and creates once", async () => {
  let posts = 0;
  const keys = new Set();
  const p = await proxy((req) => {
    if (req.method !== "POST") return undefined;
    posts++;
    keys.add(req.headers["idempotency-key"]);
    return posts === 1 ? null : undefined;
  });
  try {
    const client = new Assent({ baseUrl: p.url, apiKey: dev.agentKey, backoff: 0.05 });
    const t = tag("lost");
    const created = await client.approvals.create({ title: "Lost answer", input: { n: 1 }, externalId: t });
    assert.equal(posts, 2, "the first answer was dropped and the POST sent again");
    assert.equal(keys.size, 1, "under the same Idempotency-Key");
    const all = [];
    for await (const a of dev.agent().approvals.list({ externalId: t })) all.push(a.id);
    assert.deepEqual(all, [created.id]);
  } finally {
    await p.close();
  }
});

devTest("a collection answered", async () => {
  const client = dev.agent();
  const col = await client.collections.create({
    title: "Vendor details",
    questions: [
      { id: "vendor", prompt: "Which vendor?", kind: "choice", options: ["Acme", "Globex"] },
      { id: "budget", prompt: "Budget in EUR", kind: "number" },
    ],
    respondents: ["mia@example.com"],
  });
  assert.equal(col.status, "open");
  const mia = dev.person("mia@example.com");
  const inbox = [];
  for await (const c of mia.inbox.list("collection")) inbox.push(c.id);
  assert.ok(inbox.includes(col.id));
  // A draft unless submit is true, as in the API.
  const draft = await mia.collections.reply(col.id, { vendor: "Globex", budget: 1 });
  assert.equal(draft.status, "open");
  const read = await client.collections.get(col.id);
  assert.equal(read.status, "open");
  assert.deepEqual(read.replies ?? [], []);
  await mia.collections.reply(col.id, { vendor: "Acme", budget: 12000 }, { submit: true });
  const done = await client.collections.wait(col.id, { timeout: 60 });
  assert.equal(done.status, "complete");
  assert.deepEqual(done.replies[0].answers, { vendor: "Acme", budget: 12000 });
});

devTest("the inbox without a kind lists every kind", async () => {
  const client = dev.agent();
  const mia = dev.person("mia@example.com");
  const a = await client.approvals.create({ title: "Inbox approval", approvers: ["mia@example.com"] });
  const col = await client.collections.create({
    title: "Inbox collection",
    questions: [{ id: "ok", prompt: "Ok?", kind: "boolean" }],
    respondents: ["mia@example.com"],
  });
  const slug = "sdk/ts-inbox-" + randomUUID().slice(0, 8);
  await client.reports.create({ title: "Inbox report", content: "<h1>r</h1>", slug, audience: ["mia@example.com"] });
  const rv = await client.reviews.create({ title: "Inbox review", reportId: slug, reviewers: ["mia@example.com"] });
  const kinds = {};
  for await (const item of mia.inbox.list(undefined, { limit: 200 })) kinds[item[item.kind].id] = item.kind;
  assert.equal(kinds[a.id], "approval");
  assert.equal(kinds[col.id], "collection");
  assert.equal(kinds[rv.id], "review");
  // With a kind, that kind's list, as before.
  const collections = [];
  for await (const c of mia.inbox.list("collection")) collections.push(c.id);
  assert.ok(collections.includes(col.id));
  assert.ok(!collections.includes(a.id));
  // What needs attention first: a critical approval made last comes before the medium one made first.
  const critical = await client.approvals.create({ title: "Inbox critical", approvers: ["mia@example.com"], risk: "critical" });
  const order = [];
  for await (const item of mia.inbox.list(undefined, { order: "attention", limit: 200 })) order.push(item[item.kind].id);
  assert.ok(order.indexOf(critical.id) >= 0 && order.indexOf(critical.id) < order.indexOf(a.id));
  const approvals = [];
  for await (const x of mia.inbox.list("approval", { order: "attention" })) approvals.push(x.id);
  assert.ok(approvals.indexOf(critical.id) >= 0 && approvals.indexOf(critical.id) < approvals.indexOf(a.id));
});

devTest("a report published, versioned and reviewed", async () => {
  const client = dev.agent();
  const slug = "sdk/ts-" + randomUUID().slice(0, 8);
  const site = mkdtempSync(join(tmpdir(), "assent-ts-site-"));
  try {
    writeFileSync(join(site, "index.html"), '<!doctype html><title>Q3</title><link rel="stylesheet" href="style.css"><h1>Q3 review</h1><p>Revenue grew.</p>');
    writeFileSync(join(site, "style.css"), "h1 { color: #0550ae }");
    const report = await client.reports.create({ title: "Q3 review", path: site, slug, living: true, audience: ["mia@example.com"] });
    assert.equal(report.liveVersion, 1);
    assert.equal(report.version.files, 2);
    const v2 = await client.reports.publish(slug, { content: "<!doctype html><title>Q3</title><h1>Q3, revised</h1>", expectedVersion: 1, changeSummary: "September" });
    assert.equal(v2.liveVersion, 2);
    await assert.rejects(client.reports.publish(slug, { content: "<h1>late</h1>", expectedVersion: 1 }), (e) => e.status === 409 && e.code === ErrorCode.VERSION_CONFLICT);
    const big = "<!doctype html><title>Big</title><p>" + "x".repeat(2_000_000) + "</p>";
    assert.equal((await client.reports.publish(slug, { content: big })).liveVersion, 3, "through an upload ticket");
    assert.equal((await client.reports.publish(slug, { files: { "index.html": "<h1>four</h1>" + "y".repeat(1_600_000), "a.css": "p{}" } })).liveVersion, 4, "files zipped through a ticket");
    assert.equal((await client.reports.rollback(slug, 2)).liveVersion, 2);
    assert.deepEqual((await client.reports.versions(slug)).data.map((v) => v.version), [4, 3, 2, 1]);

    const review = await client.reviews.create({ title: "Check Q3", reportId: slug, reviewers: ["mia@example.com"], instructions: "Are the figures right?" });
    assert.equal(review.status, "open");
    await dev.person("mia@example.com").reviews.verdict(review.id, { verdict: "approved", note: "Figures match" });
    assert.equal((await client.reviews.wait(review.id, { timeout: 60 })).status, "approved");

    await client.reports.putDataset(slug, "kpis", { revenue: 1.5e6, rows: [1, 2] });
    assert.deepEqual(await client.reports.getDataset(slug, "kpis"), { revenue: 1.5e6, rows: [1, 2] });
    assert.equal((await client.reports.archive(slug)).archived, true);
    assert.equal((await client.reports.archive(slug, false)).archived, false);
    assert.ok((await client.reports.templates()).data.length > 0);
  } finally {
    rmSync(site, { recursive: true, force: true });
  }
});

devTest("requireApproval through the gate and directly", async () => {
  const name = "refund.ts" + randomUUID().slice(0, 6);
  await dev.admin().admin.actions.create({
    name,
    inputSchema: { type: "object", required: ["amount", "currency"], properties: { amount: { type: "number", exclusiveMinimum: 0, maximum: 1000 }, currency: { enum: ["EUR", "USD"] } } },
    description: "Refund a customer",
    editableFields: ["amount"],
    policy: [
      { name: "small", condition: "input.amount <= 50", outcome: "allow" },
      { name: "large", condition: "input.amount > 500", outcome: "deny", reason: "too large" },
    ],
  });
  const ran = [];
  const refund = requireApproval(async ({ amount, currency }) => {
    ran.push({ amount, currency });
    return `refunded ${amount} ${currency}`;
  }, { title: "Refund {amount} {currency}", action: name, client: dev.agent(), timeout: 60 });
  assert.equal(await refund({ amount: 20, currency: "EUR" }), "refunded 20 EUR");
  await assert.rejects(refund({ amount: 900, currency: "EUR" }), (e) => e.status === 403 && e.code === ErrorCode.GATE_DENIED);
  const decider = decideWhenAsked(dev.person("admin"), { amount: 120, currency: "EUR" }, { corrections: { amount: 100 } });
  assert.equal(await refund({ amount: 120, currency: "EUR" }), "refunded 100 EUR");
  await decider;
  assert.deepEqual(ran, [{ amount: 20, currency: "EUR" }, { amount: 100, currency: "EUR" }]);

  const sent = [];
  const send = requireApproval(({ to, subject }) => sent.push([to, subject]), { title: "Email {to}", editableFields: ["subject"], client: dev.agent(), timeout: 60 });
  let d = decideWhenAsked(dev.person("admin"), { to: "ada@example.com", subject: "Helo" }, { corrections: { subject: "Hello" } });
  await send({ to: "ada@example.com", subject: "Helo" });
  await d;
  d = decideWhenAsked(dev.person("admin"), { to: "ada@example.com", subject: "Spam" }, { decision: "reject" });
  await assert.rejects(send({ to: "ada@example.com", subject: "Spam" }), (e) => e instanceof ApprovalDenied && e.status === "rejected");
  await d;
  assert.deepEqual(sent, [["ada@example.com", "Hello"]]);

  // Each run is reported, a failed one with its error; the caller gets the function's own error.
  const to = `ops+${randomUUID().slice(0, 6)}@example.com`;
  const boom = requireApproval(() => { throw new Error("smtp down"); }, { title: "Email {to}", client: dev.agent(), timeout: 60 });
  d = decideWhenAsked(dev.person("admin"), { to });
  await assert.rejects(boom({ to }), /smtp down/);
  await d;
  let reported;
  for await (const a of dev.agent().approvals.list({ executed: true })) if (a.input?.to === to) { reported = a; break; }
  assert.equal(reported?.execution?.outcome, "failed");
});

devTest("requireApproval refuses an input nobody approved", async () => {
  let tampered = false;
  const p = await proxy((req, status, data) => {
    if (req.method !== "GET" || !req.url.startsWith("/api/v1/approvals/")) return undefined;
    const read = JSON.parse(data);
    if (!read.approvedInput) return undefined;
    read.approvedInput.amount = 5000;
    tampered = true;
    return Buffer.from(JSON.stringify(read));
  });
  try {
    const client = new Assent({ baseUrl: p.url, apiKey: dev.agentKey, issuer: dev.baseUrl });
    const ran = [];
    const refund = requireApproval(({ amount }) => ran.push(amount), { title: "Refund {amount}", client, timeout: 60 });
    const decider = decideWhenAsked(dev.person("admin"), { amount: 70, currency: "USD" });
    await assert.rejects(refund({ amount: 70, currency: "USD" }), (e) => e instanceof DecisionTokenError && e.reason === "input");
    await decider;
    assert.ok(tampered);
    assert.deepEqual(ran, [], "the function never ran");
  } finally {
    await p.close();
  }
});

devTest("one error per family", async () => {
  const client = dev.agent();
  const refused = (status, code, field) => (e) => {
    assert.ok(e instanceof AssentError, String(e));
    assert.equal(e.status, status);
    if (code) assert.equal(e.code, code);
    if (field) assert.equal(e.field, field);
    return true;
  };
  await assert.rejects(client.approvals.create({ title: "" }), refused(400, ErrorCode.INVALID_REQUEST, "title"));
  await assert.rejects(new Assent({ baseUrl: dev.baseUrl, apiKey: "asnt_agent_" + "x".repeat(52) }).approvals.get("apr_x"), refused(401, ErrorCode.UNAUTHORIZED));
  await assert.rejects(client.admin.members.list().next(), (e) => e.status === 403 && [ErrorCode.FORBIDDEN, ErrorCode.INSUFFICIENT_SCOPE].includes(e.code));
  await assert.rejects(client.approvals.get("apr_01jgx5z7m3q8r2t4v6w8y0a2c4"), refused(404, ErrorCode.NOT_FOUND));
  const created = await client.approvals.create({ title: "Decide twice" });
  await dev.person("admin").approvals.decide(created.id, { decision: "approve" });
  await assert.rejects(dev.person("admin").approvals.decide(created.id, { decision: "reject" }), refused(409));
  const key = tag("reused");
  await client.approvals.create({ title: "First body", idempotencyKey: key });
  await assert.rejects(client.approvals.create({ title: "Another body", idempotencyKey: key }), refused(422, ErrorCode.IDEMPOTENCY_KEY_REUSED));
  await assert.rejects(client.approvals.create({ title: "Who?", approvers: ["nobody-" + randomUUID().slice(0, 6) + "@example.com"] }), (e) => e.code === ErrorCode.UNKNOWN_APPROVER && e.field.startsWith("approvers"));
});

devTest("reads across resources", async () => {
  const client = dev.agent();
  assert.equal((await client.me.get()).kind, "agent");
  assert.equal((await client.service.readiness()).status, "ready");
  assert.ok("paths" in (await client.service.openapi()));
  const flow = await client.flows.create({ title: "SDK flow" });
  await client.approvals.create({ title: "In a flow", flowId: flow.id });
  assert.equal((await client.flows.get(flow.id)).id, flow.id);
  assert.ok((await client.flows.evidence(flow.id)).digest);
  assert.ok((await client.flows.evidence(flow.id, { format: "csv" })) instanceof Uint8Array);
  await client.flows.complete(flow.id);
  assert.equal((await dev.admin().admin.organization.get()).id, dev.organizationId);
  const members = [];
  for await (const m of dev.admin().admin.members.list({ limit: 2 })) members.push(m);
  assert.equal(members.length, 5);
});
