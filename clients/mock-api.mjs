// A mock Anthropic Messages API on 127.0.0.1: every request gets one reply (streamed
// when asked), and every request body is kept so tests can see what a client sent. A
// test may set `api.script` to a function of the request that returns the reply's
// content blocks (text and tool_use) and stop reason, or null for the usual reply.
import { createServer } from "node:http";

export const REPLY = "mock reply";

const LONE_SURROGATE = /\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i;

export async function startMockApi() {
  const requests = [];
  const api = { requests, script: null };
  const server = createServer((req, res) => {
    let body = "";
    // Decoded as a stream: a character split between two chunks stays whole.
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (!req.url.startsWith("/v1/messages") || req.method !== "POST") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      const request = JSON.parse(body);
      requests.push(request);
      // The real API refuses a body with a lone UTF-16 surrogate escape (escaped
      // backslashes set aside, `\\ud83d` is text).
      if (LONE_SURROGATE.test(body.replace(/\\\\/g, ""))) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "The request body is not valid JSON: no low surrogate in string" } }));
        return;
      }
      const id = `msg_mock_${requests.length}`;
      const usage = { input_tokens: 10, output_tokens: 2 };
      const { content, stop_reason } = api.script?.(request) ?? { content: [{ type: "text", text: REPLY }], stop_reason: "end_turn" };
      if (!request.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id, type: "message", role: "assistant", model: request.model, content, stop_reason, stop_sequence: null, usage }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send("message_start", { message: { id, type: "message", role: "assistant", model: request.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
      content.forEach((block, index) => {
        if (block.type === "tool_use") {
          send("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
          send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
        } else {
          send("content_block_start", { index, content_block: { type: "text", text: "" } });
          send("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
        }
        send("content_block_stop", { index });
      });
      send("message_delta", { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 2 } });
      send("message_stop", {});
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(api, { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() });
}
