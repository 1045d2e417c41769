// Starts a real `assent dev` through the shared harness
// (sdk/harness/assent_dev.py, which prints one JSON line and stops when its
// standard input closes). ASSENT_BIN names a built binary; without it the
// harness builds one.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Assent } from "../dist/index.js";

const HARNESS = fileURLToPath(new URL("../../harness/assent_dev.py", import.meta.url));

export async function startDev() {
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
export function decideWhenAsked(client, input, { decision = "approve", corrections } = {}) {
  const want = JSON.stringify(sorted(input));
  return (async () => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for await (const a of client.inbox.list("approval")) {
        if (JSON.stringify(sorted(a.input)) !== want) continue;
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
