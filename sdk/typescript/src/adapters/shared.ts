import { approve, runReported, type Approved, type RequireApprovalOptions } from "../approval.js";
import { ApprovalDenied } from "../errors.js";

export interface ToolApprovalOptions<I> extends Omit<RequireApprovalOptions<I>, "title"> {
  title?: RequireApprovalOptions<I>["title"];
  /**
   * What the tool answers the model when the person did not approve
   * (rejected, expired, cancelled). Default: a sentence saying so, so the
   * agent can tell its user. A decision token that does not verify is
   * always thrown.
   */
  onDenied?: (denied: ApprovalDenied) => unknown;
}

export function denied(e: ApprovalDenied): string {
  const a = e.approval;
  return `Not run: a person did not approve this call (${a.status}${a.note ? ": " + a.note : ""}).`;
}

/** execute, asking Assent first, running with the approved input and reporting the run. */
export function wrapExecute<I, A extends unknown[], R>(
  execute: (input: I, ...rest: A) => R,
  options: ToolApprovalOptions<I> & { title: RequireApprovalOptions<I>["title"] },
): (input: I, ...rest: A) => Promise<Awaited<R> | unknown> {
  return async (input: I, ...rest: A) => {
    let approved: Approved<I>;
    try {
      approved = await approve(input, options);
    } catch (e) {
      if (e instanceof ApprovalDenied) return (options.onDenied ?? denied)(e);
      throw e;
    }
    return runReported(approved, (i) => execute(i, ...rest));
  };
}
