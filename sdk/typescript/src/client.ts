// The client: every operation of the contract, grouped by resource.
import { readFile, readdir, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { components } from "./generated/schema.js";
import type { OperationId } from "./generated/operations.js";
import { AssentError, WaitTimeout } from "./errors.js";
import { Transport, sleep, type RequestOptions, type TransportOptions } from "./http.js";
import { verifyDecisionToken, DecisionTokenError, type DecisionClaims, type JsonWebKeySet } from "./verify.js";
import { zip } from "./zip.js";

/** The document's schemas, by name: Schemas["Approval"]. */
export type Schemas = components["schemas"];
export type Approval = Schemas["Approval"];
export type Collection = Schemas["Collection"];
export type Review = Schemas["Review"];
export type Report = Schemas["Report"];
export type InboxItem = Schemas["InboxItem"];

/** Seconds. */
export type Seconds = number;
export type Time = string | Date;

export const ONE_DAY: Seconds = 86_400;
/** A report's content beyond this goes through an upload ticket, not the JSON body (2 MB at most). */
export const INLINE_LIMIT = 1_500_000;

/** Options of every POST: the Idempotency-Key to send (a fresh one otherwise). */
export interface PostOptions {
  idempotencyKey?: string;
}

/** The convenience every create offers: expiresIn (seconds, default one day; null leaves it to the organisation) or expiresAt. */
export interface Expiry {
  expiresIn?: Seconds | null;
  expiresAt?: Time;
}

type WithExpiry<T> = Omit<T, "expiresAt"> & Expiry & PostOptions;

function iso(t: Time | undefined | null): string | undefined {
  if (t === undefined || t === null) return undefined;
  return typeof t === "string" ? t : t.toISOString();
}

class Resource {
  protected readonly t: Transport;
  constructor(protected readonly client: Assent) {
    this.t = client.transport;
  }

  protected async call(id: OperationId, o: RequestOptions = {}): Promise<any> {
    return (await this.t.request(id, o)).data;
  }

  /** Every item of a list, page after page. */
  protected async *pages<T>(id: OperationId, o: RequestOptions & { limit?: number } = {}): AsyncGenerator<T> {
    const query: Record<string, any> = { ...(o.query ?? {}) };
    if (o.limit !== undefined) query.limit = o.limit;
    for (;;) {
      const page = await this.call(id, { path: o.path, query });
      for (const item of page?.data ?? []) yield item as T;
      if (!page?.nextCursor) return;
      query.cursor = page.nextCursor;
    }
  }

  /**
   * Long-poll until the request leaves its open state or the time is up. A
   * dropped connection or a refusal to hold one more long-poll is retried
   * until the deadline; only a settled read is returned.
   */
  protected async waitFor<T extends { status: string }>(id: OperationId, requestId: string, open: string, timeout: Seconds): Promise<T> {
    const start = Date.now();
    const deadline = start + timeout * 1000;
    let last: T | undefined;
    for (;;) {
      const wait = Math.max(0, Math.min(60, Math.floor((deadline - Date.now()) / 1000)));
      try {
        last = await this.call(id, { path: { id: requestId }, query: { wait: `${wait}s` }, timeout: wait + 15 });
      } catch (e) {
        if (!(e instanceof AssentError) || (e.status !== 0 && e.status !== 429 && e.status < 500)) throw e;
        if (Date.now() >= deadline) throw e;
        await sleep(Math.min(1, Math.max(0, (deadline - Date.now()) / 1000)));
        continue;
      }
      if (last!.status !== open) return last!;
      // Less than a second left: one more poll would return at once.
      if (wait === 0 || Date.now() >= deadline) throw new WaitTimeout(last, (Date.now() - start) / 1000);
    }
  }
}

/** Ask a person before an action (scope approvals:*). */
export class Approvals extends Resource {
  /** Create a pending approval; it expires after expiresIn seconds (one day unless given) or at expiresAt. */
  async create(params: WithExpiry<Schemas["ApprovalCreate"]>): Promise<Approval> {
    const { expiresIn, expiresAt, idempotencyKey, ...fields } = params;
    const body: Schemas["ApprovalCreate"] = { ...fields, expiresAt: this.client.expiryFor(idempotencyKey, expiresIn, expiresAt) };
    return this.call("createApproval", { body, idempotencyKey });
  }
  async get(id: string): Promise<Approval> {
    return this.call("getApproval", { path: { id } });
  }
  /** The approval once it is no longer pending (approved, rejected, expired or cancelled); WaitTimeout when timeout (seconds, default 300) passes first. */
  async wait(id: string, options: { timeout?: Seconds } = {}): Promise<Approval> {
    return this.waitFor<Approval>("getApproval", id, "pending", options.timeout ?? 300);
  }
  /** Every approval, newest first, fetching pages as it goes; executed false lists the approved ones nobody reported as run, true those reported. */
  list(params: { status?: string; externalId?: string; executed?: boolean; limit?: number } = {}): AsyncGenerator<Approval> {
    const executed = params.executed === undefined ? undefined : String(params.executed);
    return this.pages("listApprovals", { query: { status: params.status, externalId: params.externalId, executed }, limit: params.limit });
  }
  async cancel(id: string, options: PostOptions = {}): Promise<Approval> {
    return this.call("cancelApproval", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  /** A person's decision (member token): approve (with corrections to editable fields) or reject. */
  async decide(id: string, params: Schemas["DecisionCreate"] & PostOptions): Promise<Approval> {
    const { idempotencyKey, ...body } = params;
    return this.call("decideApproval", { path: { id }, body, idempotencyKey });
  }
  /** An approver asks the requester a question (member token). */
  async ask(id: string, question: string, options: PostOptions = {}): Promise<Schemas["Question"]> {
    return this.call("askQuestion", { path: { id }, body: { question }, idempotencyKey: options.idempotencyKey });
  }
  /** The requester answers an approver's question. */
  async answer(id: string, questionId: string, answer: string, options: PostOptions = {}): Promise<Approval> {
    return this.call("answerQuestion", { path: { id }, body: { questionId, answer }, idempotencyKey: options.idempotencyKey });
  }
}

/** Requests for information: typed questions to people. */
export class Collections extends Resource {
  async create(params: WithExpiry<Schemas["CollectionCreate"]> & { dueAt?: Time }): Promise<Collection> {
    const { expiresIn, expiresAt, idempotencyKey, dueAt, ...fields } = params;
    const body = { ...fields, dueAt: iso(dueAt), expiresAt: this.client.expiryFor(idempotencyKey, expiresIn, expiresAt) };
    return this.call("createCollection", { body, idempotencyKey });
  }
  async get(id: string): Promise<Collection> {
    return this.call("getCollection", { path: { id } });
  }
  /** The collection once it is no longer open (complete, expired or cancelled). */
  async wait(id: string, options: { timeout?: Seconds } = {}): Promise<Collection> {
    return this.waitFor<Collection>("getCollection", id, "open", options.timeout ?? 300);
  }
  list(params: { status?: string; externalId?: string; flowId?: string; limit?: number } = {}): AsyncGenerator<Collection> {
    const { limit, ...query } = params;
    return this.pages("listCollections", { query, limit });
  }
  async cancel(id: string, options: PostOptions = {}): Promise<Collection> {
    return this.call("cancelCollection", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  /** A respondent's reply (member token): a draft, as in the API, unless submit is true. */
  async reply(id: string, answers: Record<string, unknown>, options: PostOptions & { submit?: boolean } = {}): Promise<Collection> {
    return this.call("replyToCollection", { path: { id }, body: { answers, submit: options.submit ?? false }, idempotencyKey: options.idempotencyKey });
  }
}

/** Verdicts from people on a version of a report. */
export class Reviews extends Resource {
  async create(params: WithExpiry<Schemas["ReviewCreate"]>): Promise<Review> {
    const { expiresIn, expiresAt, idempotencyKey, ...fields } = params;
    const body = { ...fields, expiresAt: this.client.expiryFor(idempotencyKey, expiresIn, expiresAt) };
    return this.call("createReview", { body, idempotencyKey });
  }
  async get(id: string): Promise<Review> {
    return this.call("getReview", { path: { id } });
  }
  /** The review once it is no longer open. */
  async wait(id: string, options: { timeout?: Seconds } = {}): Promise<Review> {
    return this.waitFor<Review>("getReview", id, "open", options.timeout ?? 300);
  }
  list(params: { status?: string; externalId?: string; flowId?: string; reportId?: string; limit?: number } = {}): AsyncGenerator<Review> {
    const { limit, ...query } = params;
    return this.pages("listReviews", { query, limit });
  }
  async cancel(id: string, options: PostOptions = {}): Promise<Review> {
    return this.call("cancelReview", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  /** A reviewer's verdict (member token): approved or changes_requested. */
  async verdict(id: string, params: Schemas["VerdictCreate"] & PostOptions): Promise<Review> {
    const { idempotencyKey, ...body } = params;
    return this.call("reviewVerdict", { path: { id }, body, idempotencyKey });
  }
}

/** Threads on reports, and revision briefs. */
export class Comments extends Resource {
  async list(report: string): Promise<Schemas["ThreadList"]> {
    return this.call("listReportComments", { path: { idOrSlug: report } });
  }
  /** Every open thread the caller may read, on every report. */
  open(params: { limit?: number } = {}): AsyncGenerator<Schemas["Thread"]> {
    return this.pages("listOpenComments", { limit: params.limit });
  }
  /** A new thread (quote, or the whole report) or, with threadId, a reply. */
  async post(report: string, params: Schemas["CommentCreate"] & PostOptions): Promise<Schemas["Thread"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("postComment", { path: { idOrSlug: report }, body, idempotencyKey });
  }
  async retract(report: string, commentId: string): Promise<void> {
    await this.call("retractComment", { path: { idOrSlug: report, commentId } });
  }
  async image(report: string, sha256: string): Promise<Uint8Array> {
    return this.call("getCommentImage", { path: { idOrSlug: report, sha256 } });
  }
  async resolve(threadId: string, params: Schemas["ThreadResolve"] & PostOptions = {}): Promise<Schemas["Thread"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("resolveThread", { path: { threadId }, body, idempotencyKey });
  }
  async revisionBrief(report: string, params: Schemas["RevisionBriefCreate"] & PostOptions = {}): Promise<Schemas["RevisionBrief"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createRevisionBrief", { path: { idOrSlug: report }, body, idempotencyKey });
  }
}

/** The action gate (scope gate:check). */
export class Gate extends Resource {
  /** Ask before running a registered action: allowed (with a decision token) or approval_required (with the approval); a denial is AssentError 403 gate_denied. */
  async check(params: Schemas["GateCheckRequest"] & PostOptions): Promise<Schemas["GateAnswer"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("checkGate", { body, idempotencyKey });
  }
}

/** Execution receipts (scope receipts:write): what ran of what a decision token allowed. */
export class Receipts extends Resource {
  /** Report a run: the token's first receipt; AssentError 409 receipt_exists for a second (error.receipt the token's receipt by id and times), 409 input_mismatch (recorded; error.receipt this one) when input is not the one approved; 403 forbidden unless the token was issued to this key or person or its action names this key among its executors. */
  async create(params: Schemas["ReceiptCreate"] & PostOptions): Promise<Schemas["Receipt"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createReceipt", { body, idempotencyKey });
  }
}

/**
 * Standing mandates: a person's approval, given once, of the gate checks of
 * one action within a condition, agent keys, a budget per window and its
 * times. Granted with a member token (approvals:write); a check one covers
 * is allowed, its answer naming it (mandateId).
 */
export class Mandates extends Resource {
  /** budget: a count, a sum of a numeric input field, or both, per window; a mandate beyond the granter's authority rejects with AssentError 403 forbidden naming action. */
  async grant(params: Omit<Schemas["MandateGrant"], "expiresAt" | "startsAt"> & { expiresAt: Time; startsAt?: Time } & PostOptions): Promise<Schemas["Mandate"]> {
    const { idempotencyKey, expiresAt, startsAt, ...fields } = params;
    const body: Schemas["MandateGrant"] = { ...fields, expiresAt: iso(expiresAt)!, startsAt: iso(startsAt) };
    return this.call("grantMandate", { body, idempotencyKey });
  }
  /** Newest first; live: true leaves out the revoked and expired. */
  list(params: { live?: boolean; limit?: number } = {}): AsyncGenerator<Schemas["Mandate"]> {
    const live = params.live === undefined ? undefined : String(params.live);
    return this.pages("listMandates", { query: { live }, limit: params.limit });
  }
  async get(id: string): Promise<Schemas["Mandate"]> {
    return this.call("getMandate", { path: { id } });
  }
  /** At once; one already revoked or expired rejects with AssentError 409 invalid_state. */
  async revoke(id: string, options: PostOptions = {}): Promise<Schemas["Mandate"]> {
    return this.call("revokeMandate", { path: { id }, idempotencyKey: options.idempotencyKey });
  }
}

/** Flows group the requests of one job, with their evidence. */
export class Flows extends Resource {
  async create(params: Schemas["FlowCreate"] & PostOptions): Promise<Schemas["Flow"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createFlow", { body, idempotencyKey });
  }
  async get(id: string): Promise<Schemas["Flow"]> {
    return this.call("getFlow", { path: { id } });
  }
  async complete(id: string, options: PostOptions = {}): Promise<void> {
    await this.call("completeFlow", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  async cancel(id: string, options: PostOptions = {}): Promise<void> {
    await this.call("cancelFlow", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  /** The signed evidence export (format json), or the timeline as CSV bytes. */
  async evidence(id: string, options: { format?: "json" | "csv" } = {}): Promise<Schemas["Evidence"] | Uint8Array> {
    return this.call("getFlowEvidence", { path: { id }, query: { format: options.format ?? "json" } });
  }
}

/** One HTML document, files by path, or a path on disk (an HTML file, a ZIP or a folder). */
export type Content = { content: string; files?: never; path?: never } | { files: Record<string, string>; content?: never; path?: never } | { path: string; content?: never; files?: never };

async function folderFiles(root: string): Promise<Array<[string, Uint8Array]>> {
  const out: Array<[string, Uint8Array]> = [];
  const walk = async (dir: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const full = join(dir, name);
      if ((await stat(full)).isDirectory()) await walk(full);
      else out.push([relative(root, full).split(sep).join("/"), new Uint8Array(await readFile(full))]);
    }
  };
  await walk(root);
  return out;
}

/** Published HTML reports: versions, sharing, datasets, analytics. */
export class Reports extends Resource {
  /** The content fields of a publish: inline when small, else through an upload ticket (uploaded here). */
  private async content(c: Content): Promise<Record<string, unknown>> {
    const given = [c.content, c.files, c.path].filter((x) => x !== undefined);
    if (given.length !== 1) throw new TypeError("give exactly one of content, files and path");
    const enc = new TextEncoder();
    if (c.path !== undefined) {
      if ((await stat(c.path)).isDirectory()) return { uploadId: (await this.upload(zip(await folderFiles(c.path)), "application/zip")).uploadId };
      const data = new Uint8Array(await readFile(c.path));
      if (c.path.toLowerCase().endsWith(".zip")) return { uploadId: (await this.upload(data, "application/zip")).uploadId };
      if (data.length <= INLINE_LIMIT) {
        try {
          return { content: new TextDecoder("utf-8", { fatal: true }).decode(data) };
        } catch {
          // not UTF-8: upload the bytes as they are
        }
      }
      return { uploadId: (await this.upload(data, "text/html")).uploadId };
    }
    if (c.content !== undefined) {
      const bytes = enc.encode(c.content);
      return bytes.length <= INLINE_LIMIT ? { content: c.content } : { uploadId: (await this.upload(bytes, "text/html")).uploadId };
    }
    const entries = Object.entries(c.files!);
    if (entries.reduce((n, [, text]) => n + enc.encode(text).length, 0) <= INLINE_LIMIT) {
      return { files: entries.map(([path, content]) => ({ path, content })) };
    }
    return { uploadId: (await this.upload(zip(entries.map(([p, text]) => [p, enc.encode(text)])), "application/zip")).uploadId };
  }

  /** Take an upload ticket and PUT data (an HTML file or a ZIP, up to 100 MB) to it; publish with its uploadId. */
  async upload(data: Uint8Array, contentType: "text/html" | "application/zip" = "text/html"): Promise<Schemas["Upload"]> {
    const ticket: Schemas["Upload"] = await this.call("createUpload", { body: {} });
    await this.t.request("putUpload", { body: data, contentType, url: ticket.uploadUrl, auth: false });
    return ticket;
  }

  /** Publish a new report from content, files or path; large content goes through an upload ticket by itself. */
  async create(params: Omit<Schemas["ReportCreate"], "content" | "files" | "uploadId"> & Content & PostOptions): Promise<Report> {
    const { idempotencyKey, content, files, path, ...fields } = params;
    const body = { ...fields, ...(await this.content({ content, files, path } as Content)) };
    return this.call("createReport", { body, idempotencyKey });
  }
  /** Publish a new version of report (id or slug); with expectedVersion, refused with version_conflict unless it is still the latest. */
  async publish(report: string, params: Omit<Schemas["VersionCreate"], "content" | "files" | "uploadId"> & Content & PostOptions): Promise<Report> {
    const { idempotencyKey, content, files, path, ...fields } = params;
    const body = { ...fields, ...(await this.content({ content, files, path } as Content)) };
    return this.call("publishVersion", { path: { idOrSlug: report }, body, idempotencyKey });
  }
  async get(report: string): Promise<Report> {
    return this.call("getReport", { path: { idOrSlug: report } });
  }
  list(params: { flowId?: string; archived?: boolean; limit?: number } = {}): AsyncGenerator<Report> {
    const { limit, ...query } = params;
    return this.pages("listReports", { query, limit });
  }
  async update(report: string, params: Schemas["ReportPatch"]): Promise<Report> {
    return this.call("updateReport", { path: { idOrSlug: report }, body: params });
  }
  async versions(report: string): Promise<Schemas["VersionList"]> {
    return this.call("listVersions", { path: { idOrSlug: report } });
  }
  async rollback(report: string, version: number, options: PostOptions = {}): Promise<Report> {
    return this.call("rollbackReport", { path: { idOrSlug: report }, body: { version }, idempotencyKey: options.idempotencyKey });
  }
  /** Archive the report, or restore it with archived false. */
  async archive(report: string, archived = true, options: PostOptions = {}): Promise<Report> {
    return this.call("archiveReport", { path: { idOrSlug: report }, body: { archived }, idempotencyKey: options.idempotencyKey });
  }
  /** A copy of a report's live version, or of a template (by its id). */
  async copy(reportOrTemplate: string, params: Schemas["CopyRequest"] & PostOptions = {}): Promise<Report> {
    const { idempotencyKey, ...body } = params;
    return this.call("copyReport", { path: { idOrSlug: reportOrTemplate }, body, idempotencyKey });
  }
  async templates(): Promise<Schemas["TemplateList"]> {
    return this.call("listTemplates");
  }
  async share(report: string, audience: string[], options: PostOptions = {}): Promise<Schemas["Sharing"]> {
    return this.call("shareReport", { path: { idOrSlug: report }, body: { audience }, idempotencyKey: options.idempotencyKey });
  }
  async unshare(report: string, audience: string[]): Promise<Schemas["Sharing"]> {
    return this.call("unshareReport", { path: { idOrSlug: report }, body: { audience } });
  }
  async send(report: string, params: Schemas["SendRequest"] & PostOptions): Promise<Schemas["Sent"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("sendReport", { path: { idOrSlug: report }, body, idempotencyKey });
  }
  async analytics(report: string): Promise<Schemas["ReportAnalytics"]> {
    return this.call("getReportAnalytics", { path: { idOrSlug: report } });
  }
  organizationAnalytics(params: { limit?: number } = {}): AsyncGenerator<Schemas["ReportReach"]> {
    return this.pages("getOrganizationAnalytics", { limit: params.limit });
  }
  async evidence(report: string, options: { format?: "json" | "csv" } = {}): Promise<Schemas["Evidence"] | Uint8Array> {
    return this.call("getReportEvidence", { path: { idOrSlug: report }, query: { format: options.format ?? "json" } });
  }
  async datasets(report: string): Promise<Schemas["DatasetList"]> {
    return this.call("listDatasets", { path: { idOrSlug: report } });
  }
  /** Store data (any JSON) as the report's dataset name, read at _data/<name>. */
  async putDataset(report: string, name: string, data: unknown): Promise<Schemas["Dataset"]> {
    return this.call("putDataset", { path: { idOrSlug: report, name }, body: data });
  }
  async getDataset(report: string, name: string): Promise<unknown> {
    return this.call("getDataset", { path: { idOrSlug: report, name } });
  }
  async deleteDataset(report: string, name: string): Promise<void> {
    await this.call("deleteDataset", { path: { idOrSlug: report, name } });
  }
}

export class Audiences extends Resource {
  /** What each phrase of an audience means (people, teams, public), or an error with candidates. */
  async resolve(audience: string[], options: PostOptions = {}): Promise<Schemas["ResolvedAudience"]> {
    return this.call("resolveAudience", { body: { audience }, idempotencyKey: options.idempotencyKey });
  }
}

/** Schedules that fire schedule.due for living reports. */
export class Schedules extends Resource {
  async create(params: Schemas["ScheduleCreate"] & PostOptions): Promise<Schemas["Schedule"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createSchedule", { body, idempotencyKey });
  }
  async get(id: string): Promise<Schemas["Schedule"]> {
    return this.call("getSchedule", { path: { id } });
  }
  list(params: { reportId?: string; limit?: number } = {}): AsyncGenerator<Schemas["Schedule"]> {
    return this.pages("listSchedules", { query: { reportId: params.reportId }, limit: params.limit });
  }
  async delete(id: string): Promise<void> {
    await this.call("deleteSchedule", { path: { id } });
  }
  async pause(id: string, options: PostOptions = {}): Promise<Schemas["Schedule"]> {
    return this.call("pauseSchedule", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  async resume(id: string, options: PostOptions = {}): Promise<Schemas["Schedule"]> {
    return this.call("resumeSchedule", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
}

/**
 * An inbox list's limit, and its order: "attention" (the highest risk, then the soonest due) or "newest"; without it, newest first
 * for every kind and for approvals, attention for the other two.
 */
export interface InboxParams {
  limit?: number;
  order?: "attention" | "newest";
}

/** What waits on the person a member token acts for. */
export class Inbox extends Resource {
  /**
   * What waits on the caller. Without kind, every kind, newest first (at most limit, one page), each an InboxItem: its kind and the
   * request under the field of that name. With kind approval, collection or review, that kind's list. params.order orders it.
   */
  list(kind?: undefined, params?: InboxParams): AsyncGenerator<InboxItem>;
  list(kind: "approval", params?: InboxParams): AsyncGenerator<Approval>;
  list(kind: "collection", params?: InboxParams): AsyncGenerator<Collection>;
  list(kind: "review", params?: InboxParams): AsyncGenerator<Review>;
  list(kind?: "approval" | "collection" | "review", params?: InboxParams): AsyncGenerator<InboxItem | Approval | Collection | Review>;
  list(kind?: "approval" | "collection" | "review", params: InboxParams = {}): AsyncGenerator<any> {
    return this.pages("inbox", { query: { kind, order: params.order }, limit: params.limit });
  }
}

/** The caller: its key, organisation and person. */
export class Me extends Resource {
  async get(): Promise<Schemas["Me"]> {
    return this.call("getMe");
  }
  /** A person mints a token of their own (member token). */
  async createToken(params: Schemas["MemberTokenCreate"] & PostOptions = {}): Promise<Schemas["MemberToken"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createOwnToken", { body, idempotencyKey });
  }
  /** The person's own member tokens, revoked ones included, newest first (member token). */
  listTokens(params: { limit?: number } = {}): AsyncGenerator<Schemas["Key"]> {
    return this.pages("listOwnTokens", { limit: params.limit });
  }
  /** Revokes one of the person's own tokens; anyone else's is not found (member token). */
  async revokeToken(id: string): Promise<Schemas["Key"]> {
    return this.call("revokeOwnToken", { path: { id } });
  }
  /** The person's delegation while away (null when none) and those that name them (member token). */
  async getDelegation(): Promise<Schemas["MyDelegation"]> {
    return this.call("getMyDelegation");
  }
  /** Who stands in for the person from `from` (now when left out) until `until`; replaces any delegation. */
  async setDelegation(params: { to: string; until: Time; from?: Time; note?: string }): Promise<Schemas["MyDelegation"]> {
    return this.call("setMyDelegation", { body: { ...params, until: iso(params.until), from: iso(params.from) } });
  }
  /** Ends the person's delegation at once; ending none is no error. */
  async endDelegation(): Promise<void> {
    await this.call("endMyDelegation");
  }
}

/** Health, the contract and the published keys; no key needed. */
export class Service extends Resource {
  async health(): Promise<unknown> {
    return this.call("healthz", { auth: false });
  }
  async readiness(): Promise<Schemas["Readiness"]> {
    return this.call("readyz", { auth: false });
  }
  async openapi(): Promise<Record<string, unknown>> {
    return this.call("getOpenAPI", { auth: false });
  }
  /** The JSON Web Key set decision tokens are signed with. */
  async decisionKeys(): Promise<Schemas["SigningKeySet"]> {
    return this.call("getDecisionKeys", { auth: false });
  }
  async evidenceKeys(): Promise<Schemas["SigningKeySet"]> {
    return this.call("getEvidenceKeys", { auth: false });
  }
  /** How the MCP endpoint (/mcp) authenticates (RFC 9728). */
  async mcpResourceMetadata(): Promise<Schemas["ProtectedResourceMetadata"]> {
    return this.call("getMCPResourceMetadata", { auth: false });
  }
  async resourceMetadata(): Promise<Schemas["ProtectedResourceMetadata"]> {
    return this.call("getResourceMetadata", { auth: false });
  }
}

// The admin API (admin keys).

class AdminOrganization extends Resource {
  async get(): Promise<Schemas["Organization"]> {
    return this.call("getOrganization");
  }
  async update(params: Schemas["OrganizationPatch"]): Promise<Schemas["Organization"]> {
    return this.call("updateOrganization", { body: params });
  }
}

class AdminMembers extends Resource {
  async create(params: Schemas["MemberCreate"] & PostOptions): Promise<Schemas["Member"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createMember", { body, idempotencyKey });
  }
  list(params: { limit?: number } = {}): AsyncGenerator<Schemas["Member"]> {
    return this.pages("listMembers", { limit: params.limit });
  }
  async update(id: string, params: Schemas["MemberPatch"]): Promise<Schemas["Member"]> {
    return this.call("updateMember", { path: { id }, body: params });
  }
  async createToken(id: string, params: Schemas["MemberTokenCreate"] & PostOptions = {}): Promise<Schemas["MemberToken"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createMemberToken", { path: { id }, body, idempotencyKey });
  }
}

class AdminTeams extends Resource {
  async create(params: Schemas["TeamCreate"] & PostOptions): Promise<Schemas["Team"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createTeam", { body, idempotencyKey });
  }
  list(params: { limit?: number } = {}): AsyncGenerator<Schemas["Team"]> {
    return this.pages("listTeams", { limit: params.limit });
  }
  async update(id: string, params: Schemas["TeamPatch"]): Promise<Schemas["Team"]> {
    return this.call("updateTeam", { path: { id }, body: params });
  }
  async delete(id: string): Promise<void> {
    await this.call("deleteTeam", { path: { id } });
  }
}

class AdminGuests extends Resource {
  async create(params: Schemas["GuestCreate"] & PostOptions): Promise<Schemas["Guest"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createGuest", { body, idempotencyKey });
  }
  list(params: { limit?: number } = {}): AsyncGenerator<Schemas["Guest"]> {
    return this.pages("listGuests", { limit: params.limit });
  }
  async update(id: string, params: Schemas["GuestPatch"]): Promise<Schemas["Guest"]> {
    return this.call("updateGuest", { path: { id }, body: params });
  }
  async remove(id: string): Promise<void> {
    await this.call("removeGuest", { path: { id } });
  }
}

class AdminKeys extends Resource {
  /** An agent or admin key; its secret is in this answer only. */
  async create(params: Schemas["KeyCreate"] & PostOptions): Promise<Schemas["CreatedKey"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createKey", { body, idempotencyKey });
  }
  list(params: { limit?: number } = {}): AsyncGenerator<Schemas["Key"]> {
    return this.pages("listKeys", { limit: params.limit });
  }
  async revoke(id: string): Promise<Schemas["Key"]> {
    return this.call("revokeKey", { path: { id } });
  }
}

class AdminRules extends Resource {
  async create(params: Schemas["RuleCreate"] & PostOptions): Promise<Schemas["Rule"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createRule", { body, idempotencyKey });
  }
  list(params: { limit?: number } = {}): AsyncGenerator<Schemas["Rule"]> {
    return this.pages("listRules", { limit: params.limit });
  }
  async update(id: string, params: Schemas["RulePatch"]): Promise<Schemas["Rule"]> {
    return this.call("updateRule", { path: { id }, body: params });
  }
  async delete(id: string): Promise<void> {
    await this.call("deleteRule", { path: { id } });
  }
}

class AdminWebhooks extends Resource {
  /** An endpoint; its signing secret is in this answer only. */
  async create(params: Schemas["WebhookSettings"] & PostOptions): Promise<Schemas["WebhookEndpoint"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createWebhook", { body, idempotencyKey });
  }
  list(params: { limit?: number } = {}): AsyncGenerator<Schemas["WebhookEndpoint"]> {
    return this.pages("listWebhooks", { limit: params.limit });
  }
  async get(id: string): Promise<Schemas["WebhookEndpoint"]> {
    return this.call("getWebhook", { path: { id } });
  }
  async update(id: string, params: Schemas["WebhookSettings"]): Promise<Schemas["WebhookEndpoint"]> {
    return this.call("updateWebhook", { path: { id }, body: params });
  }
  async delete(id: string): Promise<void> {
    await this.call("deleteWebhook", { path: { id } });
  }
  async rotateSecret(id: string, options: PostOptions = {}): Promise<Schemas["WebhookEndpoint"]> {
    return this.call("rotateWebhookSecret", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  async test(id: string, options: PostOptions = {}): Promise<Schemas["TestResult"]> {
    return this.call("testWebhook", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  deliveries(id: string, params: { status?: string; limit?: number } = {}): AsyncGenerator<Schemas["Delivery"]> {
    return this.pages("listDeliveries", { path: { id }, query: { status: params.status }, limit: params.limit });
  }
  async recover(id: string, since: Time, options: PostOptions = {}): Promise<Schemas["RecoverResult"]> {
    return this.call("recoverDeliveries", { path: { id }, body: { since: iso(since) }, idempotencyKey: options.idempotencyKey });
  }
}

class AdminDeliveries extends Resource {
  async get(id: string): Promise<Schemas["Delivery"]> {
    return this.call("getDelivery", { path: { id } });
  }
  async resend(id: string, options: PostOptions = {}): Promise<Schemas["Delivery"]> {
    return this.call("resendDelivery", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
}

class AdminActions extends Resource {
  /** Register an action for the gate. */
  async create(params: Schemas["ActionInput"] & PostOptions): Promise<Schemas["Action"]> {
    const { idempotencyKey, ...body } = params;
    return this.call("createAction", { body, idempotencyKey });
  }
  list(params: { limit?: number } = {}): AsyncGenerator<Schemas["Action"]> {
    return this.pages("listActions", { limit: params.limit });
  }
  async get(id: string): Promise<Schemas["Action"]> {
    return this.call("getAction", { path: { id } });
  }
  /** Replace the whole definition. */
  async update(id: string, params: Schemas["ActionInput"]): Promise<Schemas["Action"]> {
    return this.call("updateAction", { path: { id }, body: params });
  }
  async delete(id: string): Promise<void> {
    await this.call("deleteAction", { path: { id } });
  }
}

class AdminSlack extends Resource {
  async get(): Promise<Schemas["SlackIntegration"]> {
    return this.call("getSlackIntegration");
  }
  async put(params: Schemas["SlackSettings"]): Promise<Schemas["SlackIntegration"]> {
    return this.call("putSlackIntegration", { body: params });
  }
  async delete(): Promise<void> {
    await this.call("deleteSlackIntegration");
  }
  async manifest(): Promise<Schemas["SlackManifest"]> {
    return this.call("getSlackManifest");
  }
}

class AdminModelScreen extends Resource {
  async get(): Promise<Schemas["ModelScreen"]> {
    return this.call("getModelScreen");
  }
  /** Switches the screen on or changes it; `apiKey` is write-only, left out keeps the stored one. */
  async put(params: Schemas["ModelScreenSettings"]): Promise<Schemas["ModelScreen"]> {
    return this.call("putModelScreen", { body: params });
  }
  async delete(): Promise<void> {
    await this.call("deleteModelScreen");
  }
}

class AdminHeldVersions extends Resource {
  async list(): Promise<Schemas["HeldVersionList"]> {
    return this.call("listHeldVersions");
  }
  async release(id: string, options: PostOptions = {}): Promise<Report> {
    return this.call("releaseHeldVersion", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
  async decline(id: string, options: PostOptions = {}): Promise<Report> {
    return this.call("declineHeldVersion", { path: { id }, body: {}, idempotencyKey: options.idempotencyKey });
  }
}

/** The organisation's administration (admin keys). */
export class Admin {
  readonly organization: AdminOrganization;
  readonly members: AdminMembers;
  readonly teams: AdminTeams;
  readonly guests: AdminGuests;
  readonly keys: AdminKeys;
  readonly rules: AdminRules;
  readonly webhooks: AdminWebhooks;
  readonly deliveries: AdminDeliveries;
  readonly actions: AdminActions;
  readonly slack: AdminSlack;
  readonly modelScreen: AdminModelScreen;
  readonly heldVersions: AdminHeldVersions;
  constructor(client: Assent) {
    this.organization = new AdminOrganization(client);
    this.members = new AdminMembers(client);
    this.teams = new AdminTeams(client);
    this.guests = new AdminGuests(client);
    this.keys = new AdminKeys(client);
    this.rules = new AdminRules(client);
    this.webhooks = new AdminWebhooks(client);
    this.deliveries = new AdminDeliveries(client);
    this.actions = new AdminActions(client);
    this.slack = new AdminSlack(client);
    this.modelScreen = new AdminModelScreen(client);
    this.heldVersions = new AdminHeldVersions(client);
  }
}

/** Operations the SDK leaves out on purpose, with why. */
export const NOT_SURFACED: Readonly<Record<string, string>> = {
  slackInteractions: "Slack calls it with Slack's signature; no Assent client does",
  metrics: "Prometheus scrapes it; it is a process's metrics, not the API's",
};

export interface AssentOptions extends TransportOptions {
  /** The instance's public base URL, which decision tokens name, when you reach the API at another address (default baseUrl). */
  issuer?: string;
}

/**
 * An Assent client. baseUrl and apiKey default to ASSENT_BASE_URL and
 * ASSENT_API_KEY. The key is an agent key, a member token (a person's:
 * deciding, replying, the inbox) or an admin key (client.admin).
 */
export class Assent {
  readonly transport: Transport;
  readonly issuer: string;
  readonly approvals: Approvals;
  readonly collections: Collections;
  readonly reviews: Reviews;
  readonly comments: Comments;
  readonly gate: Gate;
  readonly receipts: Receipts;
  readonly mandates: Mandates;
  readonly flows: Flows;
  readonly reports: Reports;
  readonly audiences: Audiences;
  readonly schedules: Schedules;
  readonly inbox: Inbox;
  readonly me: Me;
  readonly service: Service;
  readonly admin: Admin;
  private jwks: JsonWebKeySet | undefined;
  private jwksAt = 0;
  private organization: string | undefined;
  private readonly expiries = new Map<string, string | undefined>();

  constructor(options: AssentOptions = {}) {
    this.transport = new Transport(options);
    this.issuer = (options.issuer ?? this.transport.baseUrl).replace(/\/+$/, "");
    this.approvals = new Approvals(this);
    this.collections = new Collections(this);
    this.reviews = new Reviews(this);
    this.comments = new Comments(this);
    this.gate = new Gate(this);
    this.receipts = new Receipts(this);
    this.mandates = new Mandates(this);
    this.flows = new Flows(this);
    this.reports = new Reports(this);
    this.audiences = new Audiences(this);
    this.schedules = new Schedules(this);
    this.inbox = new Inbox(this);
    this.me = new Me(this);
    this.service = new Service(this);
    this.admin = new Admin(this);
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /**
   * expiresAt for a create. A repeat with the caller's key sends the expiry
   * computed the first time, so the body is the same and the server answers
   * the first response instead of idempotency_key_reused.
   */
  expiryFor(idempotencyKey: string | undefined, expiresIn: Seconds | null | undefined, expiresAt: Time | undefined): string | undefined {
    const compute = () => (expiresIn === null ? undefined : new Date(Date.now() + (expiresIn ?? ONE_DAY) * 1000).toISOString());
    if (expiresAt !== undefined) return iso(expiresAt);
    if (idempotencyKey === undefined) return compute();
    if (!this.expiries.has(idempotencyKey)) {
      this.expiries.set(idempotencyKey, compute());
      if (this.expiries.size > 1000) this.expiries.delete(this.expiries.keys().next().value as string);
    }
    return this.expiries.get(idempotencyKey);
  }

  /** Call any operation by its operationId (the generic function every method uses). */
  async request(operationId: OperationId, options: RequestOptions = {}): Promise<any> {
    return (await this.transport.request(operationId, options)).data;
  }

  /**
   * verifyDecisionToken against this instance: its key set (kept 5 minutes,
   * fetched again for an unknown key), the caller's organisation, and issuer
   * (default the client's).
   */
  async verifyDecisionToken(token: string, input: unknown, options: { action?: string; issuer?: string } = {}): Promise<DecisionClaims> {
    if (this.organization === undefined) this.organization = (await this.me.get()).organization.id;
    const verify = async (refresh: boolean) =>
      verifyDecisionToken(token, input, { jwks: await this.keys(refresh), issuer: options.issuer ?? this.issuer, organization: this.organization!, action: options.action });
    try {
      return await verify(false);
    } catch (e) {
      if (!(e instanceof DecisionTokenError) || e.reason !== "unknown_key") throw e;
      return verify(true);
    }
  }

  private async keys(refresh: boolean): Promise<JsonWebKeySet> {
    if (refresh || !this.jwks || Date.now() - this.jwksAt > 300_000) {
      this.jwks = (await this.service.decisionKeys()) as unknown as JsonWebKeySet;
      this.jwksAt = Date.now();
    }
    return this.jwks;
  }
}
