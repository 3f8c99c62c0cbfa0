// A model endpoint for the playground's browser test, served beside the page: the
// Anthropic Messages API (`POST …/v1/messages`) and OpenAI chat completions
// (`POST …/chat/completions`), not streamed. It calls `calculate` on a prompt with
// arithmetic and answers from a tool result, so one question takes two requests.
// Every request body is kept in `requests` for the test to inspect.
export const requests = [];

const reply = (response, body) => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));

function anthropic(body, response) {
  const last = body.messages.at(-1);
  const blocks = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  const result = blocks.find((b) => b.type === "tool_result");
  const usage = { input_tokens: 10, output_tokens: 5 };
  const id = `msg_mock_${requests.length}`;
  if (result) {
    return reply(response, { id, type: "message", role: "assistant", model: body.model, stop_reason: "end_turn", usage, content: [{ type: "text", text: `The mock model read: ${result.content}` }] });
  }
  const prompt = blocks.filter((b) => b.type === "text").map((b) => b.text).join(" ");
  const expression = prompt.match(/[\d(][-+*/().\d\s]*\d\)*/)?.[0]?.trim() ?? "0";
  return reply(response, {
    id, type: "message", role: "assistant", model: body.model, stop_reason: "tool_use", usage,
    content: [{ type: "text", text: "Calculating." }, { type: "tool_use", id: `toolu_mock_${requests.length}`, name: "calculate", input: { expression } }],
  });
}

function openai(body, response) {
  const last = body.messages.at(-1);
  const choice = (message, finish_reason) => ({ id: `chatcmpl-mock-${requests.length}`, model: body.model, choices: [{ index: 0, message, finish_reason }], usage: { prompt_tokens: 10, completion_tokens: 5 } });
  if (last.role === "tool") return reply(response, choice({ role: "assistant", content: `The mock model read: ${last.content}` }, "stop"));
  const prompt = typeof last.content === "string" ? last.content : last.content.map((p) => p.text ?? "").join(" ");
  const expression = prompt.match(/[\d(][-+*/().\d\s]*\d\)*/)?.[0]?.trim() ?? "0";
  // A prompt asking for it gets a call whose arguments are not JSON, as small models write.
  const args = prompt.includes("broken arguments") ? "{expression: 6 *" : JSON.stringify({ expression });
  const call = { id: `call_mock_${requests.length}`, type: "function", function: { name: "calculate", arguments: args } };
  return reply(response, choice({ role: "assistant", content: null, tool_calls: [call] }, "tool_calls"));
}

/** Answers a request to the mock endpoint; false when the path is not one of its. */
export function handleModelRequest(path, request, response) {
  const route = path.endsWith("/v1/messages") ? anthropic : path.endsWith("/chat/completions") ? openai : null;
  if (!route || request.method !== "POST") return false;
  let text = "";
  // Decoded as a stream: a character split between two chunks stays whole.
  request.setEncoding("utf8");
  request.on("data", (chunk) => { text += chunk; });
  request.on("end", () => {
    const body = JSON.parse(text);
    requests.push({ path, headers: request.headers, body });
    route(body, response);
  });
  return true;
}
