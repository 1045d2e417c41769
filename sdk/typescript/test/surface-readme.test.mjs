// README.md lists every public method and function with its signature: the
// block under "## Every method" is what this test reads from the built
// declarations (it prints the listing when they differ).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import ts from "typescript";

const dist = (f) => new URL("../dist/" + f, import.meta.url);

function parse(file) {
  const sf = ts.createSourceFile(file, readFileSync(dist(file), "utf8"), ts.ScriptTarget.Latest, true);
  const classes = {};
  const functions = [];
  const text = (node) => node.getText(sf).replace(/\s+/g, " ").replace(/; \}/g, " }").replace(/;$/, "");
  for (const node of sf.statements) {
    if (ts.isClassDeclaration(node)) {
      const c = (classes[node.name.text] = { methods: [], fields: {} });
      for (const m of node.members) {
        const hidden = (m.modifiers ?? []).some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword);
        if (hidden || !m.name) continue;
        if (ts.isMethodDeclaration(m)) c.methods.push(text(m));
        if (ts.isPropertyDeclaration(m) && m.type && ts.isTypeReferenceNode(m.type)) c.fields[m.name.text] = m.type.typeName.getText(sf);
      }
    }
    if (ts.isFunctionDeclaration(node) && (node.modifiers ?? []).some((x) => x.kind === ts.SyntaxKind.ExportKeyword)) functions.push(text(node));
  }
  return { classes, functions };
}

export function listing() {
  const { classes } = parse("client.d.ts");
  const out = [];
  const walk = (prefix, cls) => {
    for (const [field, type] of Object.entries(classes[cls].fields)) {
      if (!classes[type]) continue;
      if (type === "Admin") walk(prefix + ".admin", type);
      else for (const m of classes[type].methods) out.push(`${prefix}.${field}.${m}`);
    }
  };
  walk("assent", "Assent");
  for (const m of classes.Assent.methods) out.push(`assent.${m}`);
  // The package's functions, by the names index.ts exports them under.
  const index = readFileSync(new URL("../src/index.ts", import.meta.url), "utf8");
  for (const file of ["approval.d.ts", "verify.d.ts", "jcs.d.ts", "adapters/ai.d.ts", "adapters/openai-agents.d.ts"]) {
    const module = file.startsWith("adapters/") ? `@assent/sdk/${file.slice(9, -5)}: ` : "";
    for (const f of parse(file).functions) {
      let name = /^export declare function (\w+)/.exec(f)[1];
      const alias = new RegExp(`\\b${name} as (\\w+)`).exec(index);
      if (!module && !new RegExp(`\\b${name}\\b`).test(index)) continue;
      const sig = f.replace(/^export declare function \w+/, "");
      out.push(module + (alias ? alias[1] : name) + sig);
    }
  }
  return out;
}

test("README.md lists every method with its signature", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /^## Every method\n[\s\S]*?```ts\n([\s\S]*?)```/m.exec(readme);
  const want = listing();
  assert.ok(block, "README.md has no '## Every method' block");
  assert.deepEqual(block[1].trimEnd().split("\n"), want, "README.md's '## Every method' block should read:\n" + want.join("\n"));
});
