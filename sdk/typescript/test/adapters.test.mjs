// The toolkit examples (examples/, built to build-examples/) end to end
// against a real `assent dev`, offline: each toolkit's own test or scripted
// model calls the refund tool, which runs only after a demo person approved,
// and with their correction.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startDev, decideWhenAsked, devTest } from "./harness.mjs";

let dev;
before(async () => {
  dev = await startDev();
});
after(async () => {
  await dev?.stop();
});

function run(example) {
  const file = fileURLToPath(new URL(`../build-examples/${example}.js`, import.meta.url));
  const env = { ...process.env, ASSENT_BASE_URL: dev.baseUrl, ASSENT_API_KEY: dev.agentKey, OPENAI_API_KEY: "", OPENAI_AGENTS_DISABLE_TRACING: "1" };
  const child = spawn(process.execPath, [file], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return {
    output: () => out,
    done: new Promise((resolve) => child.on("exit", (code) => resolve({ code, out, err }))),
  };
}

for (const example of ["vercel-ai", "openai-agents"]) {
  devTest(`${example}: the tool runs only after approval, with the corrected input`, async () => {
    const p = run(example);
    // Until the person decides, the tool has not run: checked when the
    // approval is waiting, just before the decision.
    let outputWhileWaiting;
    await decideWhenAsked(dev.person("admin"), { orderId: "1042", amount: 120 },
      { corrections: { amount: 100 }, beforeDeciding: () => (outputWhileWaiting = p.output()) });
    assert.equal(typeof outputWhileWaiting, "string");
    assert.doesNotMatch(outputWhileWaiting, /REFUNDED/);
    const { code, out, err } = await p.done;
    assert.equal(code, 0, err);
    assert.match(out, /REFUNDED \{"orderId":"1042","amount":100\}/);
    assert.doesNotMatch(out, /"amount":120\}/);
    assert.match(out, /ANSWER The refund is done\./);
  });

  devTest(`${example}: a rejection never runs the tool and tells the model`, async () => {
    const p = run(example);
    const decided = decideWhenAsked(dev.person("admin"), { orderId: "1042", amount: 120 }, { decision: "reject" });
    await decided;
    const { code, out, err } = await p.done;
    assert.equal(code, 0, err);
    assert.doesNotMatch(out, /REFUNDED/);
    if (example === "vercel-ai") assert.match(out, /TOOL RESULT "Not run: a person did not approve this call \(rejected: decided by the e2e test\)\."/);
    assert.match(out, /ANSWER The refund is done\./); // the scripted model answers regardless
  });
}
