// requireApproval: run a function only after a person approved its input.
import { Assent, type Expiry, type Schemas, type Seconds } from "./client.js";
import { ApprovalDenied, AssentError } from "./errors.js";

export interface RequireApprovalOptions<I> {
  /** The approval's title: "{field}" placeholders are filled from the input, or a function of it. */
  title: string | ((input: I) => string);
  editableFields?: string[];
  risk?: Schemas["ApprovalCreate"]["risk"];
  approvers?: string[];
  description?: string;
  /** A registered action: the call asks the action gate (POST /api/v1/gate) first. */
  action?: string;
  /** Default new Assent() from the environment. */
  client?: Assent;
  /** Seconds to wait for the decision; default one hour. */
  timeout?: Seconds;
  /** Any other field of ApprovalCreate (externalId, flowId, metadata, …). */
  fields?: Omit<Partial<Schemas["ApprovalCreate"]>, "title" | "input" | "expiresAt"> & Expiry;
}

function fill(title: string, input: unknown): string {
  return title.replace(/\{(\w+)\}/g, (whole, name) => {
    const v = input && typeof input === "object" ? (input as Record<string, unknown>)[name] : undefined;
    return v === undefined ? whole : typeof v === "string" ? v : JSON.stringify(v);
  });
}

/** An input approved to run, with the decision token that proves it and the client that asked. */
export interface Approved<I> {
  input: I;
  decisionToken: string;
  client: Assent;
}

/**
 * Ask a person about input and resolve to the input to run with: the
 * approved one (the approver's corrections applied) once its decision token
 * verifies against it for the caller's organisation (and action). Rejects
 * with ApprovalDenied, DecisionTokenError, WaitTimeout or AssentError
 * (gate_denied) otherwise. The adapters and requireApproval share it.
 */
export async function approvedInput<I>(input: I, o: RequireApprovalOptions<I>): Promise<I> {
  return (await approve(input, o)).input;
}

/** approvedInput with its token, to run it and report the run (runReported). */
export async function approve<I>(input: I, o: RequireApprovalOptions<I>): Promise<Approved<I>> {
  const c = o.client ?? new Assent();
  let approval: Schemas["Approval"] | undefined;
  if (o.action !== undefined) {
    const answer = await c.gate.check({ action: o.action, input: input as Record<string, unknown> });
    if (answer.decision === "allowed") {
      const decisionToken = answer.decisionToken ?? "";
      await c.verifyDecisionToken(decisionToken, input, { action: o.action });
      return { input, decisionToken, client: c };
    }
    approval = answer.approval ?? undefined;
  }
  if (!approval) {
    approval = await c.approvals.create({
      ...(o.fields ?? {}),
      title: typeof o.title === "function" ? o.title(input) : fill(o.title, input),
      input: input as Record<string, unknown>,
      editableFields: o.editableFields,
      risk: o.risk,
      approvers: o.approvers,
      description: o.description,
    });
  }
  const settled = await c.approvals.wait(approval.id, { timeout: o.timeout ?? 3600 });
  if (settled.status !== "approved") throw new ApprovalDenied(settled);
  const approved = (settled.approvedInput ?? {}) as I;
  if (!settled.decisionToken) {
    throw new AssentError(0, "no_decision_token", `approval ${settled.id} carries no decision token; the instance issues none without ASSENT_BASE_URL`);
  }
  await c.verifyDecisionToken(settled.decisionToken, approved, { action: o.action });
  return { input: approved, decisionToken: settled.decisionToken, client: c };
}

/**
 * Run fn with what was approved, then post its execution receipt
 * (succeeded, or failed with the error's message, cut to 4096 bytes, as
 * the result). A receipt
 * that cannot be posted is a console warning, never fn's failure: fn's own
 * result or error is what the promise settles with.
 */
export async function runReported<I, R>(a: Approved<I>, fn: (input: I) => R | Promise<R>): Promise<R> {
  const startedAt = new Date().toISOString();
  let out: R;
  try {
    out = await fn(a.input);
  } catch (e) {
    await report(a, startedAt, "failed", failureResult(e instanceof Error ? e.message : String(e)));
    throw e;
  }
  await report(a, startedAt, "succeeded", null);
  return out;
}

/**
 * The most of an error's message a failure receipt keeps, in bytes of
 * UTF-8, marker included: the API refuses a result over 64 KB, and a
 * refused receipt would lose the record of the run, not just the message's
 * tail. The Go and Python SDKs cut at the same length.
 */
const MAX_FAILURE_RESULT = 4096;

/** message cut to MAX_FAILURE_RESULT bytes on a character's boundary, ending with a marker that says so and how long it was. */
function failureResult(message: string): string {
  const utf8 = new TextEncoder();
  const bytes = utf8.encode(message);
  if (bytes.length <= MAX_FAILURE_RESULT) return message;
  const marker = `… [truncated from ${bytes.length} bytes]`;
  let cut = MAX_FAILURE_RESULT - utf8.encode(marker).length;
  while ((bytes[cut] & 0xc0) === 0x80) cut--; // back to the start of a character
  return new TextDecoder().decode(bytes.subarray(0, cut)) + marker;
}

async function report<I>(a: Approved<I>, startedAt: string, outcome: "succeeded" | "failed", result: string | null): Promise<void> {
  try {
    await a.client.receipts.create({ decisionToken: a.decisionToken, input: a.input as Record<string, unknown> | null,
      outcome, result, startedAt, finishedAt: new Date().toISOString() });
  } catch (e) {
    console.warn(`assent: the execution receipt was not posted: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Wrap fn so that each call first asks a person. The call's argument (an
 * object of JSON values) is the approval's input; fn runs only once it is
 * approved, with the approved input, and only if the decision token
 * verifies against that input; otherwise the returned promise rejects and
 * fn does not run. Once fn has run, its execution receipt is posted
 * (runReported).
 */
export function requireApproval<I extends Record<string, unknown>, R>(
  fn: (input: I) => R | Promise<R>,
  options: RequireApprovalOptions<I>,
): (input: I) => Promise<R> {
  return async (input: I) => runReported(await approve(input, options), fn);
}
