// The SDK holds the contract: every operation, field and error code of
// sdk/openapi.json is in the SDK, and the SDK calls nothing the document
// lacks. check() is the comparison; the tests run it on the document and on
// copies with a deliberate difference, which it must report.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, cpSync, writeFileSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { expected, generate, DOC, OUT, ROOT } from "../tools/generate.mjs";
import { OPERATIONS, SCHEMA_FIELDS, ERROR_CODES } from "../dist/generated/operations.js";
import { NOT_SURFACED, Assent } from "../dist/index.js";

const load = () => JSON.parse(readFileSync(DOC, "utf8"));

/** operationId -> the source file that calls it, read from the SDK's sources. */
function uses() {
  const found = {};
  for (const file of ["client.ts", "approval.ts"]) {
    const text = readFileSync(join(ROOT, "src", file), "utf8");
    for (const m of text.matchAll(/\b(?:call|pages|waitFor|request)(?:<[^>]*>)?\(\s*"(\w+)"/g)) found[m[1]] ??= file;
  }
  return found;
}

/** Every difference between the document and the SDK, one line each. */
export function check(doc) {
  const want = expected(doc);
  const problems = [];
  const have = OPERATIONS;
  for (const id of Object.keys(want.operations).filter((k) => !(k in have)).sort()) problems.push(`operation ${id}: in the document, missing from the SDK`);
  for (const id of Object.keys(have).filter((k) => !(k in want.operations)).sort()) problems.push(`operation ${id}: in the SDK, not in the document`);
  for (const id of Object.keys(have).filter((k) => k in want.operations).sort()) {
    for (const [key, value] of Object.entries(want.operations[id])) {
      if (JSON.stringify(have[id][key]) !== JSON.stringify(value)) problems.push(`operation ${id}: ${key} is ${JSON.stringify(value)} in the document, ${JSON.stringify(have[id][key])} in the SDK`);
    }
  }
  const used = uses();
  for (const id of Object.keys(want.operations).filter((k) => !(k in used) && !(k in NOT_SURFACED)).sort()) problems.push(`operation ${id}: no client method calls it`);
  for (const id of Object.keys(used).filter((k) => !(k in want.operations)).sort()) problems.push(`operation ${id}: ${used[id]} calls it, the document lacks it`);
  for (const name of Object.keys(want.schemas).filter((k) => !(k in SCHEMA_FIELDS)).sort()) problems.push(`schema ${name}: in the document, missing from the SDK`);
  for (const name of Object.keys(SCHEMA_FIELDS).filter((k) => !(k in want.schemas)).sort()) problems.push(`schema ${name}: in the SDK, not in the document`);
  for (const name of Object.keys(SCHEMA_FIELDS).filter((k) => k in want.schemas).sort()) {
    const doc = want.schemas[name];
    const sdk = SCHEMA_FIELDS[name];
    for (const p of Object.keys(doc).filter((k) => !(k in sdk)).sort()) problems.push(`schema ${name}: field ${p} in the document, missing from the SDK`);
    for (const p of Object.keys(sdk).filter((k) => !(k in doc)).sort()) problems.push(`schema ${name}: field ${p} in the SDK, not in the document`);
    for (const p of Object.keys(sdk).filter((k) => k in doc).sort()) if (doc[p] !== sdk[p]) problems.push(`schema ${name}: field ${p} is ${doc[p] ? "required" : "optional"} in the document`);
  }
  for (const code of want.codes.filter((c) => !ERROR_CODES.has(c))) problems.push(`error code ${code}: in the document, missing from ErrorCode`);
  for (const code of [...ERROR_CODES].filter((c) => !want.codes.includes(c)).sort()) problems.push(`error code ${code}: in ErrorCode, not in the document`);
  return problems;
}

test("the SDK matches the document", () => {
  assert.deepEqual(check(load()), []);
});

test("the generated code is what the document makes", async () => {
  const files = await generate(load());
  for (const [name, text] of Object.entries(files)) {
    assert.equal(readFileSync(join(OUT, name), "utf8"), text, `src/generated/${name} is stale: run node tools/generate.mjs`);
  }
});

test("reports a field removed from the document, or added, or made required", () => {
  let doc = load();
  delete doc.components.schemas.Approval.properties.approvedInput;
  assert.ok(check(doc).includes("schema Approval: field approvedInput in the SDK, not in the document"));
  doc = load();
  doc.components.schemas.ApprovalCreate.properties.priority = { type: "integer" };
  assert.ok(check(doc).includes("schema ApprovalCreate: field priority in the document, missing from the SDK"));
  doc = load();
  doc.components.schemas.ApprovalCreate.required.push("risk");
  assert.ok(check(doc).includes("schema ApprovalCreate: field risk is required in the document"));
});

test("reports an operation removed or added, and a query parameter removed", () => {
  let doc = load();
  delete doc.paths["/api/v1/approvals/{id}/cancel"];
  let problems = check(doc);
  assert.ok(problems.includes("operation cancelApproval: in the SDK, not in the document"), problems.join("\n"));
  assert.ok(problems.includes("operation cancelApproval: client.ts calls it, the document lacks it"), problems.join("\n"));
  doc = load();
  doc.paths["/api/v1/approvals/{id}/remind"] = { post: { operationId: "remindApproval", responses: { 204: { description: "ok" } } } };
  problems = check(doc);
  assert.ok(problems.includes("operation remindApproval: in the document, missing from the SDK"));
  assert.ok(problems.includes("operation remindApproval: no client method calls it"));
  doc = load();
  const get = doc.paths["/api/v1/approvals"].get;
  get.parameters = get.parameters.filter((p) => p.name !== "externalId");
  assert.ok(check(doc).some((p) => p.startsWith("operation listApprovals: query is")));
});

test("reports an error code added", () => {
  const doc = load();
  doc.paths["/api/v1/approvals"].post.responses["418"] = {
    description: "x",
    content: { "application/json": { schema: { properties: { error: { properties: { code: { const: "teapot" } } } } } } },
  };
  assert.ok(check(doc).includes("error code teapot: in the document, missing from ErrorCode"));
});

test("the SDK's own code stops compiling when the document loses a field or an operation it uses", async () => {
  const doc = load();
  delete doc.components.schemas.Approval.properties.approvedInput;
  doc.components.schemas.Approval.required = doc.components.schemas.Approval.required.filter((r) => r !== "approvedInput");
  delete doc.paths["/api/v1/approvals/{id}/cancel"];
  const dir = mkdtempSync(join(ROOT, ".drift-"));
  try {
    cpSync(join(ROOT, "src"), join(dir, "src"), { recursive: true });
    for (const [name, text] of Object.entries(await generate(doc))) writeFileSync(join(dir, "src", "generated", name), text);
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../tsconfig.json", compilerOptions: { noEmit: true, rootDir: "src" }, include: ["src"] }));
    let out = "";
    try {
      execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(dir, "tsconfig.json")], { encoding: "utf8" });
    } catch (e) {
      out = e.stdout;
    }
    assert.match(out, /approval\.ts.*Property 'approvedInput' does not exist/);
    assert.match(out, /client\.ts.*"cancelApproval"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the SDK refuses to send a field or a query parameter the document lacks", async () => {
  const client = new Assent({ baseUrl: "http://127.0.0.1:9", apiKey: "asnt_agent_x" });
  await assert.rejects(client.approvals.create({ title: "t", priority: 1 }), /ApprovalCreate has no field priority/);
  await assert.rejects(client.request("createApproval", { body: { title: "t", priority: 1 } }), TypeError);
  await assert.rejects(client.request("listApprovals", { query: { sort: "asc" } }), /takes no query parameter "sort"/);
});
