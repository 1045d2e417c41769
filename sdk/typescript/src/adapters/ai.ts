// The Vercel AI SDK (`ai`): a tool whose execute asks Assent first and runs
// with the approved input. Structural types only: no dependency on `ai`.
import { wrapExecute, type ToolApprovalOptions } from "./shared.js";

export type { ToolApprovalOptions } from "./shared.js";

/** The part of an AI SDK tool (from `tool({...})`) this adapter touches. */
export interface AiToolLike<I> {
  execute?: (input: I, options: any) => unknown;
}

/**
 * The tool, with its execute run only after a person approved the model's
 * input, and with the approved (possibly corrected) input. The decision
 * token must verify against that input, or execute does not run.
 *
 *     tools: { refund: withApproval(tool({ inputSchema, execute }), { title: "Refund {orderId}", editableFields: ["amount"] }) }
 */
export function withApproval<T extends AiToolLike<any>>(tool: T, options: ToolApprovalOptions<Parameters<NonNullable<T["execute"]>>[0]>): T {
  const execute = tool.execute;
  if (typeof execute !== "function") throw new TypeError("withApproval needs a tool with an execute function");
  return { ...tool, execute: wrapExecute(execute.bind(tool), { ...options, title: options.title ?? "Run a tool" }) };
}
