// The one request function every resource method goes through: the
// operation table, authentication, idempotency keys, retries and errors.
import { randomUUID } from "node:crypto";
import { OPERATIONS, SCHEMA_FIELDS, type OperationId } from "./generated/operations.js";
import { AssentError } from "./errors.js";
import { VERSION } from "./version.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

export interface TransportOptions {
  baseUrl?: string;
  apiKey?: string;
  /** Per HTTP request, in seconds (long-polls add their wait). Default 30. */
  timeout?: number;
  /** Retries of network errors, 5xx, 429 and 409 idempotency_in_progress. Default 4. */
  maxRetries?: number;
  /** First backoff in seconds, doubling; default 0.5. */
  backoff?: number;
  /** Longest backoff in seconds; default 8. */
  maxBackoff?: number;
  /** Appended to the User-Agent. */
  userAgent?: string;
  /** The fetch to use (default the platform's). */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  path?: Record<string, string | number>;
  query?: Record<string, string | number | boolean | null | undefined>;
  body?: unknown;
  idempotencyKey?: string;
  /** Seconds for this request. */
  timeout?: number;
  contentType?: string;
  /** An absolute URL to call instead of the operation's path (upload tickets); sent without the key. */
  url?: string;
  auth?: boolean;
  retries?: number;
}

function env(name: string): string | undefined {
  return typeof process !== "undefined" ? process.env[name] || undefined : undefined;
}

export const sleep = (seconds: number) => new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000));

/**
 * HTTP with the SDK's manners. Every POST carries an Idempotency-Key (the
 * caller's, or a fresh one kept across its retries); network errors, 5xx,
 * 429 and 409 idempotency_in_progress are retried with exponential backoff
 * and full jitter, honouring Retry-After; other 4xx never are.
 */
export class Transport {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly backoff: number;
  readonly maxBackoff: number;
  readonly userAgent: string;
  private readonly fetchFn: typeof fetch;
  /** Replaced by tests to observe backoff. */
  sleep: (seconds: number) => Promise<void> = sleep;

  constructor(o: TransportOptions = {}) {
    this.baseUrl = (o.baseUrl || env("ASSENT_BASE_URL") || DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.apiKey = o.apiKey ?? env("ASSENT_API_KEY");
    this.timeout = o.timeout ?? 30;
    this.maxRetries = o.maxRetries ?? 4;
    this.backoff = o.backoff ?? 0.5;
    this.maxBackoff = o.maxBackoff ?? 8;
    this.userAgent = `assent-typescript/${VERSION}` + (o.userAgent ? " " + o.userAgent : "");
    this.fetchFn = o.fetch ?? globalThis.fetch;
  }

  url(id: OperationId, path?: Record<string, string | number>, query?: RequestOptions["query"]): string {
    const op = OPERATIONS[id];
    let p: string = op.path;
    const given: Record<string, string | number> = { ...(path ?? {}) };
    for (const name of op.pathParams as readonly string[]) {
      const value = given[name];
      if (value === undefined || value === null || value === "") throw new TypeError(`${id} needs ${name}`);
      p = p.replace(`{${name}}`, encodeURIComponent(String(value)));
      delete given[name];
    }
    const extra = Object.keys(given);
    if (extra.length) throw new TypeError(`${id} has no path parameter ${extra.sort().join(", ")}`);
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      if (!(op.query as readonly string[]).includes(key)) {
        throw new TypeError(`${id} takes no query parameter ${JSON.stringify(key)} (it takes ${op.query.join(", ") || "none"})`);
      }
      params.append(key, String(value));
    }
    const qs = params.toString();
    return this.baseUrl + p + (qs ? "?" + qs : "");
  }

  /** Call the operation and return its decoded answer: JSON, bytes (Uint8Array) or undefined. */
  async request(id: OperationId, o: RequestOptions = {}): Promise<{ status: number; data: any; headers: Headers }> {
    const op = OPERATIONS[id];
    if (!op) throw new TypeError(`no operation ${id} in the document`);
    const target = o.url ?? this.url(id, o.path, o.query);
    const headers: Record<string, string> = { "User-Agent": this.userAgent, Accept: "application/json" };
    if (o.auth !== false && o.url === undefined) {
      if (!this.apiKey) throw new AssentError(0, "no_api_key", "no API key: pass apiKey or set ASSENT_API_KEY");
      headers["Authorization"] = "Bearer " + this.apiKey;
    }
    let data: string | Uint8Array | undefined;
    if (o.body !== undefined || (op.body !== null && op.method === "POST")) {
      const [encoded, ctype] = this.encode(id, o.body, o.contentType);
      data = encoded;
      headers["Content-Type"] = ctype;
    }
    if (op.method === "POST" && o.url === undefined) headers["Idempotency-Key"] = o.idempotencyKey || "assent-ts-" + randomUUID();
    const attempts = 1 + (o.retries ?? this.maxRetries);
    for (let attempt = 0; ; attempt++) {
      const last = attempt === attempts - 1;
      let resp: Response;
      let text: Uint8Array;
      try {
        resp = await this.fetchFn(target, { method: op.method, headers, body: data, signal: AbortSignal.timeout((o.timeout ?? this.timeout) * 1000) });
        text = new Uint8Array(await resp.arrayBuffer());
      } catch (e) {
        if (last) {
          const reason = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
          throw new AssentError(0, "network_error", `${op.method} ${target}: ${reason}`);
        }
        await this.sleep(this.delay(attempt, null));
        continue;
      }
      if (resp.status >= 200 && resp.status < 300) return { status: resp.status, data: this.decode(id, resp, text), headers: resp.headers };
      const err = AssentError.fromResponse(resp.status, new TextDecoder().decode(text), resp.headers);
      const retryable = resp.status >= 500 || resp.status === 429 || (resp.status === 409 && err.code === "idempotency_in_progress");
      if (!retryable || last) throw err;
      await this.sleep(this.delay(attempt, resp.headers.get("Retry-After")));
    }
  }

  private encode(id: OperationId, body: unknown, contentType?: string): [string | Uint8Array, string] {
    const op = OPERATIONS[id];
    if (op.body === "bytes") {
      const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
      if (!(bytes instanceof Uint8Array)) throw new TypeError(`${id} takes bytes (a Uint8Array or a string)`);
      const ctype = contentType ?? op.bodyTypes[0];
      if (!(op.bodyTypes as readonly string[]).includes(ctype)) throw new TypeError(`${id} takes ${op.bodyTypes.join(" or ")}, not ${ctype}`);
      return [bytes, ctype];
    }
    const value = body === undefined ? {} : body;
    if (op.bodySchema && value !== null && typeof value === "object" && !Array.isArray(value)) {
      const fields = SCHEMA_FIELDS[op.bodySchema];
      const unknown = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined && !(k in fields));
      if (unknown.length) throw new TypeError(`${op.bodySchema} has no field ${unknown.sort().join(", ")}`);
    }
    return [JSON.stringify(value), "application/json"];
  }

  private decode(id: OperationId, resp: Response, payload: Uint8Array): unknown {
    const kind = (OPERATIONS[id].responses as Record<string, string | null>)[String(resp.status)];
    if (!kind || payload.length === 0) return undefined;
    const ctype = (resp.headers.get("Content-Type") ?? "").split(";")[0].trim();
    if (kind === "bytes" || (ctype && ctype !== "application/json" && !ctype.endsWith("+json"))) return payload;
    return JSON.parse(new TextDecoder().decode(payload));
  }

  delay(attempt: number, retryAfter: string | null): number {
    if (retryAfter) {
      let seconds = Number(retryAfter);
      if (retryAfter.trim() === "" || Number.isNaN(seconds)) {
        const at = Date.parse(retryAfter);
        seconds = Number.isNaN(at) ? NaN : (at - Date.now()) / 1000;
      }
      if (!Number.isNaN(seconds)) return Math.max(0, Math.min(seconds, 60));
    }
    return Math.random() * Math.min(this.maxBackoff, this.backoff * 2 ** attempt);
  }
}
