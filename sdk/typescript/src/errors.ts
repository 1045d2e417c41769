import { ERROR_CODES, ErrorCode } from "./generated/operations.js";
import type { components } from "./generated/schema.js";

export { ERROR_CODES, ErrorCode };

/** The receipt a receipt's 409 carries: input_mismatch's in full, receipt_exists's by its id and times. */
export type ReceiptOfConflict = components["schemas"]["Receipt"] | components["schemas"]["RecordedReceipt"];

/**
 * An API call that did not succeed. status is the HTTP status (0 when no
 * answer came: code network_error, or no_api_key before sending); code the
 * API's stable code (compare with ErrorCode); message its explanation for
 * a person; field the request field at fault; candidates what a name could
 * have meant; receipt the execution receipt a 409 input_mismatch answers
 * with (this one, recorded as a mismatch), or the token's receipt a 409
 * receipt_exists names (its id and times only), else undefined.
 */
export class AssentError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly candidates: string[];
  readonly headers: Headers | undefined;
  readonly receipt: ReceiptOfConflict | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    field?: string | null,
    candidates?: string[] | null,
    headers?: Headers,
    receipt?: ReceiptOfConflict,
  ) {
    super(`${message} (${code}${field ? ", field " + field : ""})`);
    this.name = "AssentError";
    this.status = status;
    this.code = code;
    this.message = message;
    this.field = field ?? undefined;
    this.candidates = [...(candidates ?? [])];
    this.headers = headers;
    this.receipt = receipt;
  }

  static fromResponse(status: number, text: string, headers?: Headers): AssentError {
    try {
      const body = JSON.parse(text);
      const err = body?.error;
      if (err && typeof err.code === "string") {
        // ReceiptConflict or ReceiptExists: {error, receipt}.
        const receipt = body.receipt && typeof body.receipt === "object" && !Array.isArray(body.receipt) ? body.receipt : undefined;
        return new AssentError(status, err.code, String(err.message ?? ""), err.field, Array.isArray(err.candidates) ? err.candidates : undefined, headers, receipt);
      }
    } catch {
      // not the API's error envelope
    }
    return new AssentError(status, `http_${status}`, text.slice(0, 200) || `HTTP ${status} without an error body`, undefined, undefined, headers);
  }
}

/** wait() ran out of time while the request was still open; request is its last read, never settled. */
export class WaitTimeout extends Error {
  readonly request: unknown;
  constructor(request: { status?: string } | undefined, waitedSeconds: number) {
    super(`still ${request?.status ?? "pending"} after ${Math.round(waitedSeconds)} s`);
    this.name = "WaitTimeout";
    this.request = request;
  }
}

/** The approval settled otherwise than approved (rejected, expired or cancelled); approval is its last read. */
export class ApprovalDenied extends Error {
  readonly approval: { id: string; status: string; note?: string | null };
  readonly status: string;
  constructor(approval: { id: string; status: string; note?: string | null }) {
    super(`approval ${approval.id} was ${approval.status}${approval.note ? ": " + approval.note : ""}`);
    this.name = "ApprovalDenied";
    this.approval = approval;
    this.status = approval.status;
  }
}
