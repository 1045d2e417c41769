// A Vercel AI SDK agent whose refund tool runs only after a person approved
// it, with what they approved. It runs offline: the model is the AI SDK's
// own MockLanguageModelV3, scripted to call the tool once; put your
// provider's model in its place (e.g. openai("gpt-5")).
//
//   ASSENT_BASE_URL=… ASSENT_API_KEY=… node build-examples/vercel-ai.js
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { withApproval } from "@assent/sdk/ai";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const replies = [
  { content: [{ type: "tool-call" as const, toolCallId: "call-1", toolName: "refund", input: JSON.stringify({ orderId: "1042", amount: 120 }) }], finishReason: { unified: "tool-calls" as const, raw: undefined } },
  { content: [{ type: "text" as const, text: "The refund is done." }], finishReason: { unified: "stop" as const, raw: undefined } },
];
const model = new MockLanguageModelV3({ doGenerate: async () => ({ ...replies.shift()!, usage, warnings: [] }) });

const refund = tool({
  description: "Refund an order",
  inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
  execute: async ({ orderId, amount }) => {
    console.log(`REFUNDED ${JSON.stringify({ orderId, amount })}`); // your side effect, with the approved input
    return { refunded: amount };
  },
});

const result = await generateText({
  model,
  prompt: "Refund order 1042: the customer was charged twice.",
  tools: { refund: withApproval(refund, { title: "Refund order {orderId}", editableFields: ["amount"], risk: "medium" }) },
  stopWhen: stepCountIs(3),
});
console.log("TOOL RESULT", JSON.stringify(result.steps[0].toolResults[0]?.output));
console.log("ANSWER", result.text);
