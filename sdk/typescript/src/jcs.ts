// RFC 8785 JSON Canonicalization Scheme, and the input hash of decision
// tokens. Numbers are written as ECMAScript writes a double (JavaScript's
// own String(number)), strings with the minimal escapes, object keys sorted
// by UTF-16 code units (JavaScript's default string order).
import { createHash } from "node:crypto";

/** The value has no canonical JSON form (NaN, an infinity, a lone surrogate, a key twice, or not JSON). */
export class CanonicalizationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CanonicalizationError";
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The canonical JSON text of a JSON value. */
export function canonicalize(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join("");
}

/** Lowercase hex SHA-256 of the canonical UTF-8 of value: a decision token's inputSha256. Bytes are read as JSON text first. */
export function inputSha256(value: unknown): string {
  if (value instanceof Uint8Array) value = parse(value);
  return createHash("sha256").update(canonicalize(value), "utf8").digest("hex");
}

function string(s: string): string {
  if (LONE_SURROGATE.test(s)) throw new CanonicalizationError("a string holds a lone surrogate");
  // JSON.stringify escapes exactly what RFC 8785 asks once lone surrogates are refused.
  return JSON.stringify(s);
}

function write(value: unknown, out: string[]): void {
  if (value === null) out.push("null");
  else if (value === true) out.push("true");
  else if (value === false) out.push("false");
  else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new CanonicalizationError(`${value} has no JSON form`);
    out.push(Object.is(value, -0) ? "0" : String(value));
  } else if (typeof value === "string") out.push(string(value));
  else if (Array.isArray(value)) {
    out.push("[");
    value.forEach((v, i) => {
      if (i) out.push(",");
      write(v, out);
    });
    out.push("]");
  } else if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype || (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === null)) {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
    out.push("{");
    keys.forEach((k, i) => {
      if (i) out.push(",");
      out.push(string(k), ":");
      write(obj[k], out);
    });
    out.push("}");
  } else {
    throw new CanonicalizationError(`${typeof value === "object" ? Object.prototype.toString.call(value) : typeof value} is not a JSON value`);
  }
}

/** Parse JSON text strictly: refuses a key twice, numbers beyond a double and invalid UTF-8. Empty text is null. */
export function parse(text: string | Uint8Array): unknown {
  let s: string;
  if (typeof text === "string") s = text;
  else {
    try {
      s = new TextDecoder("utf-8", { fatal: true }).decode(text);
    } catch {
      throw new CanonicalizationError("not UTF-8");
    }
  }
  if (s.trim() === "") return null;
  let i = 0;
  const ws = () => {
    while (i < s.length && (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r")) i++;
  };
  const fail = (what: string): never => {
    throw new CanonicalizationError(`not JSON: ${what} at ${i}`);
  };
  const value = (): unknown => {
    ws();
    const c = s[i];
    if (c === "{") {
      i++;
      const obj: Record<string, unknown> = Object.create(null);
      ws();
      if (s[i] === "}") {
        i++;
        return { ...obj };
      }
      for (;;) {
        ws();
        if (s[i] !== '"') fail("expected a key");
        const key = str();
        if (Object.prototype.hasOwnProperty.call(obj, key)) throw new CanonicalizationError(`the key ${JSON.stringify(key)} appears twice`);
        ws();
        if (s[i] !== ":") fail("expected :");
        i++;
        obj[key] = value();
        ws();
        if (s[i] === ",") i++;
        else if (s[i] === "}") {
          i++;
          return Object.assign({}, obj);
        } else fail("expected , or }");
      }
    }
    if (c === "[") {
      i++;
      const arr: unknown[] = [];
      ws();
      if (s[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (s[i] === ",") i++;
        else if (s[i] === "]") {
          i++;
          return arr;
        } else fail("expected , or ]");
      }
    }
    if (c === '"') return str();
    for (const [word, v] of [["true", true], ["false", false], ["null", null]] as const) {
      if (s.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(s.slice(i, i + 1000));
    if (!m) return fail("unexpected character");
    i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) throw new CanonicalizationError(`${m[0]} is beyond a double`);
    return n;
  };
  const str = (): string => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(s.slice(i));
    if (!m) return fail("bad string");
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const v = value();
  ws();
  if (i !== s.length) fail("trailing text");
  return v;
}
