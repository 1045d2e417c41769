// The request function's manners against a scripted local server: retries
// under one Idempotency-Key, Retry-After, never retrying other 4xx, the
// environment and the user agent.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFileSync } from "node:fs";
import { Assent, AssentError, VERSION, runReported } from "../dist/index.js";

/** A server answering each request with the next of script: [status, body, headers] or "drop". */
async function scripted(script) {
  const seen = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const next = script.shift() ?? [500, { error: { code: "internal", message: "script ran out" } }];
      if (next === "drop") return req.socket.destroy();
      const [status, body, headers = {}] = next;
      res.writeHead(status, { "Content-Type": "application/json", ...headers });
      res.end(body === undefined ? "" : JSON.stringify(body));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, seen, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

const approval = { id: "apr_1", status: "pending" };
const fast = (url, o = {}) => {
  const c = new Assent({ baseUrl: url, apiKey: "asnt_agent_test", backoff: 0.01, maxBackoff: 0.02, ...o });
  return c;
};

test("network errors, 5xx, 429 and idempotency_in_progress are retried under one key", async () => {
  const s = await scripted([
    "drop",
    [503, { error: { code: "unavailable", message: "busy" } }],
    [429, { error: { code: "rate_limited", message: "slow down" } }, { "Retry-After": "0" }],
    [409, { error: { code: "idempotency_in_progress", message: "still running" } }],
    [201, approval],
  ]);
  try {
    const got = await fast(s.url).approvals.create({ title: "t" });
    assert.equal(got.id, "apr_1");
    assert.equal(s.seen.length, 5);
    const keys = new Set(s.seen.map((r) => r.headers["idempotency-key"]));
    assert.equal(keys.size, 1);
    assert.match([...keys][0], /^assent-ts-/);
    assert.equal(s.seen[0].headers["user-agent"], `assent-typescript/${VERSION}`);
    assert.equal(s.seen[0].headers.authorization, "Bearer asnt_agent_test");
    const body = JSON.parse(s.seen[0].body);
    assert.ok(Math.abs(Date.parse(body.expiresAt) - Date.now() - 86_400_000) < 60_000, "expiresIn defaults to one day, sent as expiresAt");
  } finally {
    await s.close();
  }
});

test("an upload PUTs to the ticket's URL, at another address, without the key", async () => {
  const store = await scripted([[200, { uploadId: "upl_1", contentType: "text/html", bytes: 4 }]]);
  const api = await scripted([[201, { uploadId: "upl_1", uploadUrl: `${store.url}/uploads/tkt`, expiresAt: "2030-01-01T00:00:00Z" }]]);
  try {
    const ticket = await fast(api.url).reports.upload(new TextEncoder().encode("<h1>"), "text/html");
    assert.equal(ticket.uploadId, "upl_1");
    assert.deepEqual(api.seen.map((r) => r.url), ["/api/v1/uploads"]);
    const [put] = store.seen;
    assert.deepEqual([put.method, put.url, put.body, put.headers["content-type"]], ["PUT", "/uploads/tkt", "<h1>", "text/html"]);
    assert.equal(put.headers.authorization, undefined, "the URL is the credential");
  } finally {
    await Promise.all([store.close(), api.close()]);
  }
});

test("other 4xx are never retried", async () => {
  for (const [status, code] of [[400, "invalid_request"], [404, "not_found"], [409, "already_decided"], [422, "idempotency_key_reused"]]) {
    const s = await scripted([[status, { error: { code, message: "no", field: "title", candidates: ["a", "b"] } }], [201, approval]]);
    try {
      await assert.rejects(fast(s.url).approvals.create({ title: "t" }), (e) => {
        assert.ok(e instanceof AssentError);
        assert.deepEqual([e.status, e.code, e.field, e.candidates], [status, code, "title", ["a", "b"]]);
        return true;
      });
      assert.equal(s.seen.length, 1, `${status} was sent once`);
    } finally {
      await s.close();
    }
  }
});

test("a failure receipt keeps the error's message cut to 4096 bytes of UTF-8, marked; the caller gets the error whole", async () => {
  const s = await scripted([[201, { id: "rcp_1" }], [201, { id: "rcp_2" }]]);
  try {
    const approved = { input: { n: 1 }, decisionToken: "tok", client: fast(s.url) };
    // "é" is two bytes: an odd cut falls inside one.
    const long = new Error("x" + "é".repeat(40000));
    await assert.rejects(runReported(approved, () => { throw long; }), (e) => e === long);
    await assert.rejects(runReported(approved, () => { throw new Error("card declined"); }));
    const [cut, short] = s.seen.map((r) => JSON.parse(r.body));
    assert.equal(s.seen[0].url, "/api/v1/receipts");
    assert.equal(cut.outcome, "failed");
    const bytes = Buffer.from(cut.result);
    assert.ok(bytes.length <= 4096 && bytes.length > 4000, `${bytes.length} bytes`);
    assert.ok(!cut.result.includes("\ufffd"), "cut on a character's boundary");
    const marker = "… [truncated from 80001 bytes]";
    assert.ok(cut.result.endsWith(marker), cut.result.slice(-40));
    assert.ok(long.message.startsWith(cut.result.slice(0, -marker.length)));
    assert.equal(short.result, "card declined", "a short message is kept whole");
  } finally {
    await s.close();
  }
});

test("a receipt conflict carries the token's receipt; other errors none", async () => {
  const receipt = { id: "rcp_1", decisionTokenId: "dtk_jti", inputMatches: false, outcome: "succeeded" };
  const s = await scripted([[409, { error: { code: "input_mismatch", message: "m", field: "input" }, receipt }], [409, { error: { code: "invalid_state", message: "m" } }]]);
  try {
    const c = fast(s.url);
    const now = new Date().toISOString();
    await assert.rejects(c.receipts.create({ decisionToken: "tok", input: { n: 1 }, outcome: "succeeded", startedAt: now, finishedAt: now }), (e) => {
      assert.ok(e instanceof AssentError);
      assert.deepEqual([e.status, e.code, e.field, e.receipt], [409, "input_mismatch", "input", receipt]);
      return true;
    });
    assert.equal(s.seen.length, 1, "not retried");
    await assert.rejects(c.mandates.revoke("mdt_1"), (e) => e.code === "invalid_state" && e.receipt === undefined);
  } finally {
    await s.close();
  }
});

test("a mandate's grant sends the document's body; revoke sends none", async () => {
  const mandate = { id: "mdt_1", status: "active" };
  const s = await scripted([[201, mandate], [200, mandate]]);
  try {
    const c = fast(s.url);
    const got = await c.mandates.grant({ action: "refund.create", budget: { count: 10, window: "day" }, expiresAt: new Date("2026-12-31T00:00:00Z"), agents: ["key_1"] });
    assert.equal(got.id, "mdt_1");
    assert.deepEqual(JSON.parse(s.seen[0].body), { action: "refund.create", budget: { count: 10, window: "day" }, expiresAt: "2026-12-31T00:00:00.000Z", agents: ["key_1"] });
    await c.mandates.revoke("mdt_1");
    assert.deepEqual([s.seen[1].method, s.seen[1].url, s.seen[1].body], ["POST", "/api/v1/mandates/mdt_1/revoke", ""]);
    assert.match(s.seen[1].headers["idempotency-key"], /^assent-ts-/);
  } finally {
    await s.close();
  }
});

test("the caller's key is sent; a repeat of it sends the same expiresAt", async () => {
  const s = await scripted([[201, approval], [201, approval]]);
  try {
    const c = fast(s.url);
    await c.approvals.create({ title: "t", idempotencyKey: "mine-1" });
    await new Promise((r) => setTimeout(r, 20));
    await c.approvals.create({ title: "t", idempotencyKey: "mine-1" });
    assert.deepEqual(s.seen.map((r) => r.headers["idempotency-key"]), ["mine-1", "mine-1"]);
    assert.equal(s.seen[0].body, s.seen[1].body);
  } finally {
    await s.close();
  }
});

test("giving up after the retries is network_error with status 0", async () => {
  const s = await scripted(["drop", "drop", "drop"]);
  try {
    await assert.rejects(fast(s.url, { maxRetries: 2 }).approvals.get("apr_1"), (e) => e.status === 0 && e.code === "network_error");
    assert.equal(s.seen.length, 3);
  } finally {
    await s.close();
  }
});

test("Retry-After in seconds or as a date, capped at a minute", () => {
  const t = new Assent({ baseUrl: "http://x", apiKey: "k" }).transport;
  assert.equal(t.delay(0, "2"), 2);
  assert.equal(t.delay(0, "3600"), 60);
  const d = t.delay(0, new Date(Date.now() + 5000).toUTCString());
  assert.ok(d > 3 && d <= 5, String(d));
  assert.ok(t.delay(3, null) <= 4);
});

test("baseUrl and apiKey come from the environment", () => {
  process.env.ASSENT_BASE_URL = "http://assent.example:9/";
  process.env.ASSENT_API_KEY = "asnt_agent_env";
  try {
    const c = new Assent();
    assert.equal(c.baseUrl, "http://assent.example:9");
    assert.equal(c.transport.apiKey, "asnt_agent_env");
  } finally {
    delete process.env.ASSENT_BASE_URL;
    delete process.env.ASSENT_API_KEY;
  }
});

test("no key is refused before sending", async () => {
  delete process.env.ASSENT_API_KEY;
  await assert.rejects(new Assent({ baseUrl: "http://127.0.0.1:9" }).approvals.get("apr_1"), (e) => e.code === "no_api_key");
});

test("package.json and VERSION agree", () => {
  assert.equal(JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version, VERSION);
});
