// An OpenAI Agents SDK agent whose refund tool runs only after a person
// approved it, with what they approved. It runs offline: the model is a
// scripted implementation of the SDK's Model interface that calls the tool
// once; drop `model` to use OpenAI's.
//
//   ASSENT_BASE_URL=… ASSENT_API_KEY=… node build-examples/openai-agents.js
import { Agent, Runner, Usage, setTracingDisabled, tool, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { z } from "zod";
import { withApproval } from "@assent/sdk/openai-agents";

setTracingDisabled(true);

class ScriptedModel implements Model {
  private turn = 0;
  async getResponse(_request: ModelRequest): Promise<ModelResponse> {
    this.turn++;
    const output: ModelResponse["output"] =
      this.turn === 1
        ? [{ type: "function_call", callId: "call-1", name: "refund", arguments: JSON.stringify({ orderId: "1042", amount: 120 }), status: "completed" }]
        : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "The refund is done." }] }];
    return { usage: new Usage(), output, responseId: `resp-${this.turn}` };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed");
  }
}

const refund = tool(
  withApproval(
    {
      name: "refund",
      description: "Refund an order",
      parameters: z.object({ orderId: z.string(), amount: z.number() }),
      execute: async ({ orderId, amount }: { orderId: string; amount: number }) => {
        console.log(`REFUNDED ${JSON.stringify({ orderId, amount })}`); // your side effect, with the approved input
        return `refunded ${amount}`;
      },
    },
    { title: "Refund order {orderId}", editableFields: ["amount"], risk: "medium" },
  ),
);

const agent = new Agent({ name: "Support", instructions: "Refund when asked.", tools: [refund], model: new ScriptedModel() });
const result = await new Runner().run(agent, "Refund order 1042: the customer was charged twice.");
console.log("ANSWER", result.finalOutput);
