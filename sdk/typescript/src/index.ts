export { Assent, ONE_DAY, INLINE_LIMIT, NOT_SURFACED } from "./client.js";
export type { AssentOptions, Schemas, Approval, Collection, Review, Report, InboxItem, InboxParams, Content, PostOptions, Expiry, Seconds, Time } from "./client.js";
export { AssentError, ApprovalDenied, ErrorCode, ERROR_CODES, WaitTimeout } from "./errors.js";
export type { ReceiptOfConflict } from "./errors.js";
export { Transport, type RequestOptions, type TransportOptions } from "./http.js";
export { OPERATIONS, type OperationId } from "./generated/operations.js";
export type { components, operations, paths } from "./generated/schema.js";
export { canonicalize, inputSha256, parse as parseJson, CanonicalizationError, checkMeaning, AmbiguityError, MAX_EXACT_INTEGER } from "./jcs.js";
export {
  verifyWebhook,
  verifyDecisionToken,
  fetchJwks,
  VerificationError,
  WebhookVerificationError,
  DecisionTokenError,
  type WebhookEvent,
  type DecisionClaims,
  type JsonWebKeySet,
  type HeadersLike,
  type VerifyDecisionTokenOptions,
} from "./verify.js";
export { requireApproval, approvedInput, approve, runReported, type Approved, type RequireApprovalOptions } from "./approval.js";
export { VERSION } from "./version.js";
