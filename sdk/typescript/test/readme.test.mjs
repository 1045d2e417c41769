// README.md's first example, pasted into a project that installed the
// package from the checkout, reaches a decision made by a demo person as
// the README's second block shows.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startDev, devTest } from "./harness.mjs";

let dev;
before(async () => {
  dev = await startDev();
});
after(async () => {
  await dev?.stop();
});

devTest("the README's first example works when pasted", async () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const [code, decide] = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  const project = mkdtempSync(join(tmpdir(), "assent-ts-readme-"));
  try {
    // What `npm install ../sdk/typescript` makes: a link to the package.
    mkdirSync(join(project, "node_modules", "@assent"), { recursive: true });
    symlinkSync(fileURLToPath(new URL("..", import.meta.url)), join(project, "node_modules", "@assent", "sdk"));
    writeFileSync(join(project, "example.mjs"), code);
    writeFileSync(join(project, "decide.mjs"), `import { Assent } from "@assent/sdk";\nconst ADMIN_TOKEN = process.env.ADMIN_TOKEN;\n${decide}`);
    const child = spawn(process.execPath, ["example.mjs"], {
      cwd: project,
      env: { ...process.env, ASSENT_BASE_URL: dev.baseUrl, ASSENT_API_KEY: dev.agentKey },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const exited = new Promise((resolve) => child.on("exit", resolve));
    await new Promise((resolve, reject) => {
      child.stdout.on("data", () => out.includes("Waiting for a decision") && resolve());
      exited.then(() => reject(new Error("the example ended first: " + err)));
    });
    // The person decides as the README's second block says.
    const decider = spawn(process.execPath, ["decide.mjs"], {
      cwd: project,
      env: { ...process.env, ASSENT_BASE_URL: dev.baseUrl, ADMIN_TOKEN: dev.member("admin").token },
      stdio: ["ignore", "inherit", "inherit"],
    });
    assert.equal(await new Promise((resolve) => decider.on("exit", resolve)), 0, "the README's decision failed");
    assert.equal(await exited, 0, err);
    assert.match(out, /Waiting for a decision on http/);
    assert.match(out, /Refunding \{ amount: 100, currency: 'EUR' \}/);
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
});
