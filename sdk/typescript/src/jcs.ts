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

/** An input may mean one thing to its hash and another to an executor (see checkMeaning); path names where. */
export class AmbiguityError extends Error {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`${path || "the input"} ${problem}`);
    this.name = "AmbiguityError";
    this.path = path;
  }
}

/** 2^53: up to it a double holds every integer. */
export const MAX_EXACT_INTEGER = 2 ** 53;

/**
 * Refuse, with AmbiguityError, an input whose meaning depends on who reads
 * it: an object holding two keys equal under Unicode simple case folding
 * ("amount" and "Amount", "s" and "ſ", "k" and the Kelvin sign), which Go's
 * and .NET's decoders read as one field; a number beyond ±2^53, which the
 * hash reads as the double it rounds to (send big ids as strings). input is
 * a JSON value, or a Uint8Array of JSON text (whose numbers are read
 * exactly); text that is not JSON is left to inputSha256.
 */
export function checkMeaning(input: unknown): void {
  if (input instanceof Uint8Array) {
    try {
      parse(input, true);
    } catch (e) {
      if (e instanceof AmbiguityError) throw e;
    }
    return;
  }
  walk(input, "");
}

function walk(value: unknown, path: string): void {
  if (typeof value === "number") {
    if (Math.abs(value) > MAX_EXACT_INTEGER) throw beyond(path, String(value));
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, `${path}[${i}]`));
  } else if (value !== null && typeof value === "object") {
    const seen = new Map<string, string>();
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const at = path ? `${path}.${k}` : k;
      sameKey(seen, k, at);
      walk(v, at);
    }
  }
}

function sameKey(seen: Map<string, string>, key: string, at: string): void {
  const folded = foldKey(key);
  const first = seen.get(folded);
  if (first !== undefined) {
    throw new AmbiguityError(at, `differs from ${JSON.stringify(first)} only by case: keys equal without regard to case mean one field to many executors (Go, .NET) and two to Assent`);
  }
  seen.set(folded, key);
}

function beyond(path: string, text: string): AmbiguityError {
  return new AmbiguityError(path, `is ${text}, beyond ±2^53 (9007199254740992), where a double no longer holds every integer, so it would be hashed as another number: send big ids and amounts as strings`);
}

/**
 * key with each character replaced by one of its simple case folding class,
 * so that two keys fold alike exactly when Go's strings.EqualFold holds:
 * upper then lower case where each is one character; the dotless ı folds to
 * itself (its upper case I folds to i).
 */
export function foldKey(key: string): string {
  let out = "";
  for (const ch of key) {
    if (ch === "\u0131") {
      out += ch;
      continue;
    }
    const u = ch.toUpperCase();
    const upper = [...u].length === 1 ? u : ch;
    const l = upper.toLowerCase();
    out += [...l].length === 1 ? l : upper;
  }
  return out;
}

/** Whether the JSON number text's magnitude is beyond 2^53, exactly (9007199254740993 rounds to 2^53). */
function beyondExact(text: string): boolean {
  const n = Math.abs(Number(text));
  if (n !== MAX_EXACT_INTEGER) return n > MAX_EXACT_INTEGER;
  const m = /^-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (!m) return true;
  const frac = m[2] ?? "";
  const digits = BigInt(m[1] + frac);
  const exp = BigInt(m[3] ?? "0") - BigInt(frac.length);
  const max = 2n ** 53n;
  return exp >= 0n ? digits * 10n ** exp > max : digits > max * 10n ** -exp;
}

/** Parse JSON text strictly: refuses a key twice, numbers beyond a double and invalid UTF-8. Empty text is null. With meaning, refuses what checkMeaning does too, reading numbers exactly. */
export function parse(text: string | Uint8Array, meaning = false): unknown {
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
  const value = (path: string): unknown => {
    ws();
    const c = s[i];
    if (c === "{") {
      i++;
      const obj: Record<string, unknown> = Object.create(null);
      const seen = new Map<string, string>();
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
        const at = path ? `${path}.${key}` : key;
        if (meaning) sameKey(seen, key, at);
        ws();
        if (s[i] !== ":") fail("expected :");
        i++;
        obj[key] = value(at);
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
        arr.push(value(`${path}[${arr.length}]`));
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
    if (meaning && beyondExact(m[0])) throw beyond(path, m[0]);
    return n;
  };
  const str = (): string => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(s.slice(i));
    if (!m) return fail("bad string");
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const v = value("");
  ws();
  if (i !== s.length) fail("trailing text");
  return v;
}
