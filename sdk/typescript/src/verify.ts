// Checking what the instance signed: webhook and callback deliveries, and
// decision tokens. Both work offline (a token's key set may be fetched once
// from the issuer).
import { createHmac, createPublicKey, timingSafeEqual, verify as cryptoVerify } from "node:crypto";
import { AmbiguityError, CanonicalizationError, checkMeaning, inputSha256 } from "./jcs.js";

export const SIGNATURE_HEADER = "Assent-Signature";
export const DEFAULT_TOLERANCE = 300;
export const DEFAULT_LEEWAY = 30;

/**
 * Something the instance signed did not verify. reason is a stable word:
 * for deliveries missing_header, malformed_header, timestamp_out_of_tolerance,
 * no_matching_signature, empty_secret or invalid_body; for decision tokens
 * malformed, algorithm, unknown_key, signature, issuer, organization,
 * expired, not_yet_valid, input, action or verifier.
 */
export class VerificationError extends Error {
  readonly reason: string;
  constructor(reason: string, message?: string) {
    super(message || reason);
    this.name = "VerificationError";
    this.reason = reason;
  }
}

/** A delivery did not verify; nothing in it may be trusted. */
export class WebhookVerificationError extends VerificationError {
  constructor(reason: string, message?: string) {
    super(reason, message);
    this.name = "WebhookVerificationError";
  }
}

/** A decision token does not prove that this input was approved. */
export class DecisionTokenError extends VerificationError {
  constructor(reason: string, message?: string) {
    super(reason, message);
    this.name = "DecisionTokenError";
  }
}

/** A verified delivery: the envelope's fields and its headers. */
export interface WebhookEvent {
  event: string;
  sentAt: string | undefined;
  data: any;
  requestType: string | undefined;
  requestId: string | undefined;
  test: boolean;
  deliveryId: string | undefined;
  attempt: number | undefined;
  raw: Record<string, any>;
}

export type HeadersLike = Headers | Record<string, string | string[] | undefined> | Iterable<[string, string]>;

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const entries: Iterable<[string, unknown]> =
    Symbol.iterator in (headers as object) ? (headers as Iterable<[string, string]>) : Object.entries(headers as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (k.toLowerCase() === name.toLowerCase()) return Array.isArray(v) ? v.join(",") : v == null ? undefined : String(v);
  }
  return undefined;
}

const DIGITS = /^[0-9]+$/;
const HEX64 = /^[0-9a-fA-F]{64}$/;
const MAX_INT64 = 2n ** 63n - 1n;

/**
 * Check a delivery's Assent-Signature against the raw body as received and
 * return the parsed event. Accepts when t is within tolerance seconds of
 * now (either direction) and any v1 equals HMAC-SHA256(secret, t + "." +
 * body), compared in constant time; throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: HeadersLike,
  secret: string,
  options: { tolerance?: number; now?: number } = {},
): WebhookEvent {
  if (!secret) throw new WebhookVerificationError("empty_secret", "verifying with an empty secret would accept anyone's forgery");
  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const value = header(headers, SIGNATURE_HEADER);
  if (value === undefined) throw new WebhookVerificationError("missing_header", `the delivery has no ${SIGNATURE_HEADER} header`);
  let ts: bigint | undefined;
  const sigs: Buffer[] = [];
  for (const part of value.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) throw new WebhookVerificationError("malformed_header", `malformed ${SIGNATURE_HEADER}`);
    const key = part.slice(0, eq);
    const v = part.slice(eq + 1);
    if (key === "t") {
      if (ts !== undefined || !DIGITS.test(v) || BigInt(v) > MAX_INT64) throw new WebhookVerificationError("malformed_header", `malformed t in ${SIGNATURE_HEADER}`);
      ts = BigInt(v);
    } else if (key === "v1") {
      if (!HEX64.test(v)) throw new WebhookVerificationError("malformed_header", `malformed v1 in ${SIGNATURE_HEADER}`);
      sigs.push(Buffer.from(v, "hex"));
    }
  }
  if (ts === undefined || sigs.length === 0) throw new WebhookVerificationError("malformed_header", `${SIGNATURE_HEADER} needs one t and at least one v1`);
  const now = BigInt(Math.floor(options.now ?? Date.now() / 1000));
  const tolerance = BigInt(options.tolerance && options.tolerance > 0 ? Math.floor(options.tolerance) : DEFAULT_TOLERANCE);
  const skew = ts > now ? ts - now : now - ts;
  if (skew > tolerance) throw new WebhookVerificationError("timestamp_out_of_tolerance", `the signature's t is more than ${tolerance} s from now`);
  const want = createHmac("sha256", secret).update(ts.toString() + ".").update(body).digest();
  let ok = false;
  for (const sig of sigs) ok = timingSafeEqual(sig, want) || ok; // every v1, without stopping early
  if (!ok) throw new WebhookVerificationError("no_matching_signature", "no v1 matches this body and secret");
  let envelope: unknown;
  try {
    envelope = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError("invalid_body", "the signed body is not JSON");
  }
  if (envelope === null || typeof envelope !== "object" || Array.isArray(envelope)) {
    throw new WebhookVerificationError("invalid_body", "the signed body is not a JSON object");
  }
  const env = envelope as Record<string, any>;
  const attempt = header(headers, "Assent-Attempt");
  return {
    event: env.event || header(headers, "Assent-Event") || "",
    sentAt: env.sentAt ?? undefined,
    data: env.data,
    requestType: env.requestType ?? undefined,
    requestId: env.requestId ?? undefined,
    test: Boolean(env.test),
    deliveryId: header(headers, "Assent-Delivery"),
    attempt: attempt && DIGITS.test(attempt) ? Number(attempt) : undefined,
    raw: env,
  };
}

/** What a verified decision token says. */
export interface DecisionClaims {
  issuer: string;
  subject: string;
  organization: string;
  inputSha256: string;
  deciders: string[];
  issuedAt: number;
  expiresAt: number;
  action: string | undefined;
  /** The token's jti, which an execution receipt names it by; undefined on tokens issued before receipts. */
  id: string | undefined;
  /** The standing mandate that allowed a gate check (its granter the one decider); undefined otherwise. */
  mandate: string | undefined;
}

export interface JsonWebKeySet {
  keys: Array<Record<string, unknown>>;
}

export interface VerifyDecisionTokenOptions {
  /** The instance's base URL, the token's iss. */
  issuer: string;
  /** The organisation whose decisions are accepted. */
  organization: string;
  /** The instance's key set (/.well-known/jwks.json); fetched from the issuer when absent. */
  jwks?: JsonWebKeySet | string;
  /** The registered action the token must have been issued for. */
  action?: string;
  /** Unix seconds (tests). */
  now?: number;
  leeway?: number;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function b64(segment: string): Buffer {
  if (!B64URL.test(segment) || segment.length % 4 === 1) throw new DecisionTokenError("malformed", "not base64url");
  return Buffer.from(segment, "base64url");
}

function jsonOf(segment: string, what: string): Record<string, any> {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(b64(segment)));
  } catch (e) {
    if (e instanceof DecisionTokenError) throw e;
    throw new DecisionTokenError("malformed", `the ${what} is not JSON`);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new DecisionTokenError("malformed", `the ${what} is not a JSON object`);
  return v as Record<string, any>;
}

/** The instance's decision keys, from <issuer>/.well-known/jwks.json. */
export async function fetchJwks(issuer: string): Promise<JsonWebKeySet> {
  const resp = await fetch(issuer.replace(/\/+$/, "") + "/.well-known/jwks.json", { signal: AbortSignal.timeout(10_000) });
  if (!resp.ok) throw new DecisionTokenError("verifier", `fetching the key set answered ${resp.status}`);
  return (await resp.json()) as JsonWebKeySet;
}

const seconds = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v !== 0;

/**
 * Check that token proves input was approved, and return its claims. input
 * is the input about to run: a JSON value, or a Uint8Array of JSON text.
 * It is compared by the SHA-256 of its RFC 8785 canonical form, so key
 * order, whitespace and number spelling do not matter; an input that may
 * mean something else to an executor (checkMeaning: keys equal without
 * regard to case in one object, numbers beyond ±2^53) is refused as
 * "input". Throws DecisionTokenError with the reason.
 */
export async function verifyDecisionToken(token: string, input: unknown, options: VerifyDecisionTokenOptions): Promise<DecisionClaims> {
  const { issuer, organization } = options;
  if (!issuer || !organization) throw new DecisionTokenError("verifier", "name the issuer and the organisation whose decisions to accept");
  let set = options.jwks ?? (await fetchJwks(issuer));
  if (typeof set === "string") set = JSON.parse(set) as JsonWebKeySet;
  if (!set || !Array.isArray(set.keys)) throw new DecisionTokenError("verifier", "not a JSON Web Key set");
  if (set.keys.length === 0) throw new DecisionTokenError("verifier", "the key set is empty");
  return verifyWithKeys(token, input, set, options);
}

function verifyWithKeys(token: string, input: unknown, set: JsonWebKeySet, o: VerifyDecisionTokenOptions): DecisionClaims {
  if (typeof token !== "string") throw new DecisionTokenError("malformed", "a token is a string");
  const parts = token.split(".");
  if (parts.length !== 3) throw new DecisionTokenError("malformed", "not a compact JWS");
  const head = jsonOf(parts[0], "header");
  if (head.alg !== "EdDSA") throw new DecisionTokenError("algorithm", `signed with ${JSON.stringify(head.alg)}, not EdDSA`);
  const signature = b64(parts[2]);
  const kid = head.kid;
  const key = typeof kid === "string" && kid ? publicKey(set, kid) : undefined;
  if (!key) throw new DecisionTokenError("unknown_key", `no Ed25519 key of the set has kid ${JSON.stringify(kid)}`);
  let good = false;
  try {
    good = cryptoVerify(null, Buffer.from(parts[0] + "." + parts[1], "ascii"), createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key }, format: "jwk" }), signature);
  } catch {
    good = false;
  }
  if (!good) throw new DecisionTokenError("signature", "the signature does not match");
  const c = jsonOf(parts[1], "claims");
  if (!c.sub || !c.org || typeof c.inputSha256 !== "string" || !/^[0-9a-f]{64}$/.test(c.inputSha256) || !seconds(c.iat) || !seconds(c.exp)) {
    throw new DecisionTokenError("malformed", "missing claims");
  }
  if (c.iss !== o.issuer) throw new DecisionTokenError("issuer", `issued by ${JSON.stringify(c.iss)}`);
  if (c.org !== o.organization) throw new DecisionTokenError("organization", `decided in ${JSON.stringify(c.org)}`);
  const now = o.now ?? Date.now() / 1000;
  const leeway = o.leeway ?? DEFAULT_LEEWAY;
  if (now > c.exp + leeway) throw new DecisionTokenError("expired", `expired at ${c.exp}`);
  if (c.iat > now + leeway) throw new DecisionTokenError("not_yet_valid", `issued in the future, at ${c.iat}`);
  let digest: string;
  try {
    // An input an executor may read otherwise than its hash is refused
    // even when the hash matches: an older server may have approved it.
    checkMeaning(input);
    digest = inputSha256(input);
  } catch (e) {
    if (e instanceof CanonicalizationError) throw new DecisionTokenError("input", `the input has no canonical JSON form: ${e.message}`);
    if (e instanceof AmbiguityError) throw new DecisionTokenError("input", `the input may mean something else to an executor: ${e.message}`);
    throw e;
  }
  if (!timingSafeEqual(Buffer.from(digest), Buffer.from(c.inputSha256))) throw new DecisionTokenError("input", "the input is not the one approved");
  const claims: DecisionClaims = {
    issuer: c.iss,
    subject: c.sub,
    organization: c.org,
    inputSha256: c.inputSha256,
    deciders: Array.isArray(c.deciders) ? c.deciders : [],
    issuedAt: c.iat,
    expiresAt: c.exp,
    action: c.action || undefined,
    id: c.jti || undefined,
    mandate: c.mandate || undefined,
  };
  if (o.action !== undefined && claims.action !== o.action) {
    throw new DecisionTokenError("action", `decided for ${JSON.stringify(claims.action)}, not ${JSON.stringify(o.action)}`);
  }
  return claims;
}

/** The base64url x of the set's Ed25519 signing key kid. */
function publicKey(set: JsonWebKeySet, kid: string): string | undefined {
  for (const k of set.keys) {
    if (!k || typeof k !== "object" || k.kid !== kid || k.kty !== "OKP" || k.crv !== "Ed25519") continue;
    if (![undefined, null, "", "EdDSA"].includes(k.alg as string) || ![undefined, null, "", "sig"].includes(k.use as string)) continue;
    if (typeof k.x !== "string") continue;
    try {
      if (b64(k.x).length === 32) return k.x;
    } catch {
      continue;
    }
  }
  return undefined;
}
