// The OpenAI Agents SDK (`@openai/agents`): tool options whose execute asks
// Assent first and runs with the approved input. Structural types only: no
// dependency on `@openai/agents`.
import { wrapExecute, type ToolApprovalOptions } from "./shared.js";

export type { ToolApprovalOptions } from "./shared.js";

/** The part of the options of `tool({...})` this adapter touches. */
export interface AgentsToolOptionsLike<I> {
  name?: string;
  execute: (input: I, ...rest: any[]) => unknown;
}

/**
 * The options of `tool()`, with execute run only after a person approved the
 * model's input, and with the approved (possibly corrected) input. The
 * decision token must verify against that input, or execute does not run.
 * The title defaults to "Run <name>".
 *
 *     const refund = tool(withApproval({ name: "refund", parameters, execute }, { editableFields: ["amount"] }));
 */
export function withApproval<T extends AgentsToolOptionsLike<any>>(options: T, approval: ToolApprovalOptions<Parameters<T["execute"]>[0]> = {}): T {
  if (typeof options.execute !== "function") throw new TypeError("withApproval needs tool options with an execute function");
  const title = approval.title ?? `Run ${options.name ?? options.execute.name ?? "a tool"}`;
  return { ...options, execute: wrapExecute(options.execute, { ...approval, title }) };
}
