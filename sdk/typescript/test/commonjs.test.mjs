// The package loads from CommonJS too: require() of its ES modules, which
// Node has done unflagged since 20.19 (the engines it names).
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import test from "node:test";

const require = createRequire(import.meta.url);

test("require loads the package and its adapters", () => {
  const sdk = require("@assent/sdk");
  assert.equal(typeof sdk.Assent, "function");
  assert.equal(typeof sdk.AssentError, "function");
  assert.equal(typeof require("@assent/sdk/ai").withApproval, "function");
  assert.ok(Object.keys(require("@assent/sdk/openai-agents")).length > 0);
});
