// Starts a real `assent dev` through the shared harness
// (sdk/harness/assent_dev.py, which prints one JSON line and stops when its
// standard input closes). ASSENT_BIN names a built binary; without it the
// harness builds one. When no binary can be had (no python3, or neither
// ASSENT_BIN nor a Go toolchain) the end-to-end tests skip, unless
// ASSENT_REQUIRE_E2E=1 (CI), which makes that a failure.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { Assent } from "../dist/index.js";

const onPath = (cmd) => (process.env.PATH ?? "").split(delimiter).some((d) => d && existsSync(join(d, cmd)));

/** Why the end-to-end tests cannot run here, or false. */
export const E2E_SKIP = (() => {
  let reason = false;
  if (!onPath("python3")) reason = "no python3 to run sdk/harness/assent_dev.py";
  else if (!process.env.ASSENT_BIN && !onPath("go") && !existsSync("/usr/local/go/bin/go")) reason = "no ASSENT_BIN and no Go toolchain to build assent";
  if (reason && process.env.ASSENT_REQUIRE_E2E === "1") throw new Error(reason + " (ASSENT_REQUIRE_E2E=1)");
  return reason;
})();

/** A test that needs assent dev: skipped with the reason when it cannot run. */
export const devTest = (name, fn) => test(name, { skip: E2E_SKIP }, fn);

const HARNESS = fileURLToPath(new URL("../../harness/assent_dev.py", import.meta.url));

export async function startDev() {
  if (E2E_SKIP) return undefined;
  const child = spawn("python3", [HARNESS], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the harness exited with ${code} before printing its line`)));
  });
  const info = JSON.parse(first);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    ...info,
    member(roleOrEmail = "admin") {
      const m = info.members.find((m) => m.role === roleOrEmail || m.email === roleOrEmail);
      if (!m) throw new Error(`no demo member ${roleOrEmail}`);
      return m;
    },
    agent: (o = {}) => new Assent({ baseUrl: info.baseUrl, apiKey: info.agentKey, ...o }),
    admin: () => new Assent({ baseUrl: info.baseUrl, apiKey: info.adminKey }),
    person(roleOrEmail = "admin") {
      return new Assent({ baseUrl: info.baseUrl, apiKey: this.member(roleOrEmail).token });
    },
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

/** In the background, decides the approval whose input equals input once the person's inbox shows it. */
export function decideWhenAsked(client, input, { decision = "approve", corrections, beforeDeciding } = {}) {
  const want = JSON.stringify(sorted(input));
  return (async () => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for await (const a of client.inbox.list("approval")) {
        if (JSON.stringify(sorted(a.input)) !== want) continue;
        // The moment the request waits on a person, before anyone decides.
        beforeDeciding?.();
        return client.approvals.decide(a.id, { decision, corrections: decision === "approve" ? corrections : undefined, note: "decided by the e2e test" });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error("no approval of " + want + " reached the inbox");
  })();
}

function sorted(v) {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]));
  return v;
}
