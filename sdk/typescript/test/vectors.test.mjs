// The SDK agrees with the server on every case of sdk/testdata/vectors.json
// (made by the server's own webhook and decisiontoken packages).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { canonicalize, inputSha256, parseJson, CanonicalizationError, verifyWebhook, verifyDecisionToken, WebhookVerificationError, DecisionTokenError, checkMeaning, AmbiguityError } from "../dist/index.js";

const V = JSON.parse(readFileSync(new URL("../../testdata/vectors.json", import.meta.url), "utf8"));
const enc = new TextEncoder();

test("every webhook case", () => {
  assert.ok(V.webhooks.length > 20);
  for (const c of V.webhooks) {
    const run = () => verifyWebhook(enc.encode(c.body), c.headers, c.secret, { tolerance: c.tolerance, now: c.now });
    if (c.valid) {
      const event = run();
      assert.equal(event.event, c.event, c.name);
      assert.deepEqual(event.raw, JSON.parse(c.body), c.name);
      // The body as a string and the headers as a Headers give the same answer.
      assert.equal(verifyWebhook(c.body, new Headers(c.headers), c.secret, { tolerance: c.tolerance, now: c.now }).event, c.event, c.name);
    } else {
      assert.throws(run, (e) => e instanceof WebhookVerificationError && e.reason === c.error, c.name);
    }
  }
});

test("an empty secret is refused", () => {
  const c = V.webhooks[0];
  assert.throws(() => verifyWebhook(c.body, c.headers, "", { now: c.now }), (e) => e.reason === "empty_secret");
});

test("every decision token case", async () => {
  const v = V.decisionTokens;
  assert.ok(v.cases.length > 20);
  for (const c of v.cases) {
    const opts = { issuer: c.issuer || v.issuer, organization: c.organization || v.organization, jwks: v.jwks, action: c.action ?? undefined, now: c.now, leeway: v.leeway };
    if (c.valid) {
      const claims = await verifyDecisionToken(c.token, enc.encode(c.input), opts);
      assert.equal(claims.subject, c.subject, c.name);
      // and as the value a tool would hold.
      await verifyDecisionToken(c.token, JSON.parse(c.input), opts);
    } else {
      await assert.rejects(verifyDecisionToken(c.token, enc.encode(c.input), opts), (e) => e instanceof DecisionTokenError && e.reason === c.error, c.name);
    }
  }
});

test("an input that may mean something else is refused as a value too", async () => {
  const v = V.decisionTokens;
  let refused = 0;
  for (const c of v.cases.filter((c) => /^input_(keys|.*beyond_2_53)/.test(c.name))) {
    const opts = { issuer: v.issuer, organization: v.organization, jwks: v.jwks, now: c.now, leeway: v.leeway };
    // A value JavaScript can hold as the text meant it (not 9007199254740993, which it already rounded).
    if (/1e16|\u212a|ſ|SKU|Amount/.test(c.input) || /\\u212a/.test(c.input)) {
      await assert.rejects(verifyDecisionToken(c.token, JSON.parse(c.input), opts), (e) => e instanceof DecisionTokenError && e.reason === "input", c.name);
      refused++;
    }
  }
  assert.ok(refused >= 5);
  assert.throws(() => checkMeaning({ a: [{ amount: 1, AMOUNT: 2 }] }), (e) => e instanceof AmbiguityError && e.path === "a[0].AMOUNT");
  assert.throws(() => checkMeaning({ n: -(2 ** 53) - 2 }), (e) => e instanceof AmbiguityError && e.path === "n");
  checkMeaning({ n: 2 ** 53, ref: "9007199254740993", "ß": 1, ss: 2, "ı": 3, i: 4 });
});

test("the verifier needs an issuer and an organisation", async () => {
  const v = V.decisionTokens;
  const c = v.cases[0];
  await assert.rejects(verifyDecisionToken(c.token, enc.encode(c.input), { issuer: v.issuer, organization: "", jwks: v.jwks, now: c.now }), (e) => e.reason === "verifier");
});

test("every canonical JSON case", () => {
  for (const c of V.canonicalJson) {
    assert.equal(canonicalize(parseJson(c.input)), c.canonical, c.name);
    assert.equal(inputSha256(enc.encode(c.input)), c.sha256, c.name);
  }
});

test("what has no canonical form is refused", () => {
  for (const bad of ['{"a":1,"a":2}', "NaN", "[1e400]", '"\\ud800"', '{"\\udc00":1}']) {
    assert.throws(() => inputSha256(enc.encode(bad)), CanonicalizationError, bad);
  }
  assert.throws(() => inputSha256(new Uint8Array([0x22, 0xff, 0x22])), CanonicalizationError);
  assert.throws(() => canonicalize({ a: NaN }), CanonicalizationError);
  assert.throws(() => canonicalize(new Date()), CanonicalizationError);
});
