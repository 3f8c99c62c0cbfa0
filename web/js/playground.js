// The agent playground: an agent loop on Mneme. Each model reply and the results of
// the tools it called are appended as one turn; the model is handed Mneme's
// provider-ready context; compaction runs through the core's driver when the context
// fills the window; branches can be rewound and forked; sessions export as JSONL and
// Claude Code files import by drag and drop. The model is a built-in offline one, or
// an Anthropic or OpenAI-compatible endpoint whose key stays in this page's memory.
// Long-term memory (Claude Code's memdir, in the store) is kept in the side panel; the
// memories that match a prompt reach the model as system context, never stored in the
// session; "Search sessions" finds messages across every session.
import { Mneme } from "./mneme.js";

const $ = (id) => document.getElementById(id);
const saved = JSON.parse(localStorage.getItem("mneme-playground") ?? "{}");
const CWD = "/playground";
const SYSTEM = "You are a helpful assistant in the Mneme playground. Use the tools when they help.";
const MAX_STEPS = 6;
/** The playground's memory scope: the project its sessions are filed under. */
const PROJECT = "-playground";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How many recalled memories a prompt carries to the model. */
const RECALLED = 3;
let store;
/** The entry the next prompt continues from (a rewind), if any. */
let rewindTo = null;
/** The endpoints (kind, URL and key) that have answered in this page. */
const answered = new Set();
/** The memory the memory form corrects (supersedes), if any. */
let correcting = null;

const TOOLS = [
  { name: "calculate", description: "Evaluates an arithmetic expression (+ - * / and parentheses).", parameters: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] } },
  { name: "list_sessions", description: "Lists the sessions stored in this browser.", parameters: { type: "object", properties: {} } },
];

function savePage() {
  localStorage.setItem("mneme-playground", JSON.stringify({ backend: $("backend").value, session: $("session").value, window: $("window").value }));
}

function showError(error) {
  $("error").textContent = error ? `${error.kind ?? "error"}: ${error.message}` : "";
}

const session = () => $("session").value.trim();
const windowTokens = () => Math.max(200, Number($("window").value) || 1500);
function element(tag, props = {}, children = []) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** What the page is in the middle of ("open", "send"): Send waits for all of it, Open for an open. */
const busy = new Set();
function setBusy(what, on) {
  if (on) busy.add(what);
  else busy.delete(what);
  $("send").disabled = busy.size > 0;
  $("open").disabled = busy.has("open");
  // A reply being sent goes to the store its prompt went to.
  $("backend").disabled = busy.has("send");
}

/** Numbers the calls to `open`: the backend chosen last is the one kept, whichever opens first. */
let opening = 0;
/** Settles when the newest call to `open` has its store (or has failed to open it). */
let opened = Promise.resolve();
async function open() {
  const mine = ++opening;
  setBusy("open", true);
  const previous = store;
  store = undefined;
  opened = (async () => {
    await previous?.close();
    const next = await Mneme.open({ backend: $("backend").value, namespace: "playground" });
    // A later choice of backend is opening: writes must not go to this one.
    if (mine !== opening) return await next.close();
    store = next;
    // For the console: the playground's store, to try the API on (`await mneme.load(…)`).
    globalThis.mneme = next;
  })();
  try {
    // A failure of an open a later choice superseded is not the page's to show.
    await opened.catch((error) => { if (mine === opening) throw error; });
    if (mine !== opening) return;
    savePage();
    await render();
    await renderMemory();
  } finally {
    if (mine === opening) setBusy("open", false);
  }
}

/** Waits for the backend being opened, so a click while it opens acts on it, not on none. */
async function ready() {
  for (let pending; pending !== opened; ) {
    pending = opened;
    await pending.catch(() => {});
  }
  if (!store) throw Object.assign(new Error(`the ${$("backend").value} store did not open: choose a backend again`), { kind: "not-open" });
}

// ---- tools -------------------------------------------------------------------------

/** Arithmetic without eval: + - * / and parentheses over numbers. */
function calculate(expression) {
  if (!/^[\d.\s+\-*/()]*$/.test(expression)) throw new Error(`only numbers, + - * / and parentheses: ${expression}`);
  const tokens = expression.match(/\d*\.?\d+|[-+*/()]/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const number = () => {
    const token = tokens[at++];
    if (token === "(") {
      const value = sum();
      if (tokens[at++] !== ")") throw new Error("missing )");
      return value;
    }
    if (token === "-") return -number();
    if (token === undefined || Number.isNaN(Number(token))) throw new Error(`unexpected ${token ?? "end"}`);
    return Number(token);
  };
  const product = () => {
    let value = number();
    while (peek() === "*" || peek() === "/") value = tokens[at++] === "*" ? value * number() : value / number();
    return value;
  };
  const sum = () => {
    let value = product();
    while (peek() === "+" || peek() === "-") value = tokens[at++] === "+" ? value + product() : value - product();
    return value;
  };
  const value = sum();
  if (at !== tokens.length) throw new Error(`unexpected ${tokens[at]}`);
  return value;
}

async function runTool({ id, name, input, invalid }) {
  if (invalid) return { id, content: invalid, error: true };
  try {
    if (name === "calculate") return { id, content: String(calculate(String(input.expression ?? ""))) };
    if (name === "list_sessions") {
      const { sessions } = await store.list();
      return { id, content: sessions.map((s) => `${s.id} (${s.message_count} messages)`).join("\n") || "no sessions" };
    }
    return { id, content: `unknown tool ${name}`, error: true };
  } catch (error) {
    return { id, content: String(error.message ?? error), error: true };
  }
}

// ---- models ------------------------------------------------------------------------

/** The offline model: calls `calculate` for arithmetic, `list_sessions` when asked about sessions, and answers from tool results. */
function offlineModel(body, context) {
  const last = body.messages.at(-1);
  const blocks = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  const base = { role: "assistant", id: `msg_offline_${crypto.randomUUID().slice(0, 8)}`, model: "mneme-offline", usage: { input_tokens: context.tokens, output_tokens: 24 } };
  const results = blocks.filter((b) => b.type === "tool_result");
  if (results.length) {
    const said = results.map((r) => (typeof r.content === "string" ? r.content : (r.content ?? []).map((c) => c.text ?? "").join(" "))).join("; ");
    return { reply: { ...base, stop_reason: "end_turn", content: [{ type: "text", text: `The tool says: ${said}` }] }, calls: [] };
  }
  const prompt = blocks.filter((b) => b.type === "text").map((b) => b.text).join(" ");
  const expression = prompt.match(/[\d(][-+*/().\d\s]*\d\)*/)?.[0];
  const call = (name, input, text) => {
    const id = `toolu_offline_${crypto.randomUUID().slice(0, 8)}`;
    return { reply: { ...base, stop_reason: "tool_use", content: [{ type: "text", text }, { type: "tool_use", id, name, input }] }, calls: [{ id, name, input }] };
  };
  if (expression && /[-+*/]/.test(expression)) return call("calculate", { expression: expression.trim() }, "Let me calculate that.");
  if (/session/i.test(prompt)) return call("list_sessions", {}, "Let me look at the stored sessions.");
  const text = `(offline model) I was sent ${body.messages.length} messages, about ${context.tokens} tokens. You said: "${prompt}"`;
  return { reply: { ...base, stop_reason: "end_turn", content: [{ type: "text", text }] }, calls: [] };
}

/**
 * The endpoint's URL from what was typed, its query kept: the path completed to
 * `/v1/messages` (Anthropic) or `/chat/completions` (OpenAI; a bare host gets `/v1`),
 * unless it already ends so.
 */
function endpointUrl(kind) {
  const url = new URL($("base-url").value.trim() || (kind === "anthropic" ? "https://api.anthropic.com" : "https://api.openai.com/v1"));
  const path = url.pathname.replace(/\/+$/, "");
  if (kind === "anthropic") {
    url.pathname = path.endsWith("/v1/messages") ? path : `${path.replace(/\/v1$/, "")}/v1/messages`;
  } else {
    url.pathname = path.endsWith("/chat/completions") ? path : `${path || "/v1"}/chat/completions`;
  }
  return url.toString();
}

/**
 * POSTs `body` as JSON and reads the JSON answer, within the page's timeout: an
 * endpoint that never answers fails the turn (its prompt goes back to the box) instead
 * of leaving the page busy for good.
 */
async function postJson(url, headers, body) {
  const seconds = Math.max(1, Number($("timeout").value) || 120);
  try {
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(seconds * 1000) });
    if (!response.ok) throw await refusal(response);
    return await response.json();
  } catch (error) {
    if (error.name === "TimeoutError") throw new Error(`the endpoint did not answer within ${seconds} s: send again, or allow it longer (Timeout)`);
    throw error;
  }
}

/** An endpoint's default model. */
const DEFAULT_MODEL = { anthropic: "claude-sonnet-4-5", openai: "gpt-4o" };
/** The model an endpoint is asked for: the one typed in, else the endpoint's default. */
const modelName = (kind) => $("model-name").value || DEFAULT_MODEL[kind];
/** The model the chosen endpoint is asked for; none for the offline model. */
const chosenModel = () => ($("model-kind").value === "offline" ? null : modelName($("model-kind").value));

async function anthropicModel(body, withTools = true) {
  const headers = { "content-type": "application/json", "x-api-key": $("api-key").value, "anthropic-version": "2023-06-01", "anthropic-dangerous-direct-browser-access": "true" };
  const reply = await postJson(endpointUrl("anthropic"), headers, {
    model: modelName("anthropic"), max_tokens: 1024, ...body,
    ...(withTools ? { tools: TOOLS.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) } : {}),
  });
  const { id, model, stop_reason, usage, content } = reply;
  if (!Array.isArray(content) || content.length === 0) throw new Error(`the model sent an empty reply (stop reason ${stop_reason ?? "none"})`);
  const calls = content.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, input: b.input }));
  return { reply: { role: "assistant", id, model, stop_reason, usage, content }, calls };
}

/** An endpoint's refusal as an Error with its status and what it said (JSON or a proxy's HTML page). */
async function refusal(response) {
  const text = await response.text();
  let said = text.slice(0, 500);
  try {
    const body = JSON.parse(text);
    said = JSON.stringify(body.error ?? body);
  } catch {}
  return new Error(`the endpoint said ${response.status} ${response.statusText}: ${said}`);
}

async function openaiModel(body, withTools = true) {
  const url = endpointUrl("openai");
  // OpenAI's own API refuses `max_tokens` for its reasoning models and takes
  // `max_completion_tokens` for all; the servers that copy its API know `max_tokens`.
  const limit = new URL(url).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens";
  const reply = await postJson(url, { "content-type": "application/json", authorization: `Bearer ${$("api-key").value}` }, {
    model: modelName("openai"), messages: body.messages,
    ...(body.max_tokens ? { [limit]: body.max_tokens } : {}),
    ...(withTools ? { tools: TOOLS.map((t) => ({ type: "function", function: t })) } : {}),
  });
  const choice = reply.choices?.[0];
  if (!choice?.message) throw new Error(`the endpoint answered without a choice: ${JSON.stringify(reply).slice(0, 300)}`);
  // Arguments that are not JSON (small models write them) are answered with an error
  // result, and stored as {}: the call stays in the session, paired.
  const toolCalls = (choice.message.tool_calls ?? []).map((c) => {
    try {
      return { call: c, input: JSON.parse(c.function.arguments || "{}") };
    } catch (error) {
      return { call: { ...c, function: { ...c.function, arguments: "{}" } }, input: {}, invalid: `the arguments are not JSON (${error.message}): ${c.function.arguments}` };
    }
  });
  const message = { ...choice.message, ...(toolCalls.length ? { tool_calls: toolCalls.map((t) => t.call) } : {}) };
  if (!message.content && !toolCalls.length) throw new Error("the model sent an empty reply (no text, no tool calls)");
  const calls = toolCalls.map(({ call, input, invalid }) => ({ id: call.id, name: call.function.name, input, invalid }));
  return { reply: { ...message, id: reply.id, model: reply.model, usage: reply.usage, finish_reason: choice.finish_reason }, calls };
}

// ---- the agent loop ----------------------------------------------------------------

/**
 * Runs `turn` holding session `id`'s lock among this browser's tabs (a stored backend
 * is theirs to share): two tabs sending to one session take turns, so a turn's prompt,
 * replies and tool results stay together instead of interleaving with the other's.
 */
async function oneTurnAtATime(id, turn) {
  if (store.backend === "memory") return turn();
  const name = `mneme-playground:${store.backend}:${id}`;
  return navigator.locks.request(name, { ifAvailable: true }, async (lock) => {
    if (lock) return turn();
    $("status").textContent = `Waiting for another tab's turn on ${id} to finish…`;
    return navigator.locks.request(name, turn);
  });
}

async function send() {
  const prompt = $("prompt").value.trim();
  if (!prompt || busy.size > 0) return;
  const id = session();
  const kind = $("model-kind").value;
  const provider = kind === "openai" ? "openai" : "anthropic";
  setBusy("send", true);
  // The prompt is written before the model answers (the context the model gets is the
  // session's, rewind included); if the model never answers it, it is taken back out
  // and given back to the box, so a retry does not leave a prompt without a reply.
  let unanswered = null;
  let compactionFailure = null;
  const rewoundTo = rewindTo;
  try {
    await ready();
    const exchange = async () => {
      // The store may have been reopened while this turn waited for the other tab's.
      await ready();
      [unanswered] = await store.appendTurn(id, { role: "user", content: prompt }, { cwd: CWD, parent: rewindTo });
      rewindTo = null;
      $("prompt").value = "";
      await render();
      const injections = [{ role: "system", place: "start", text: SYSTEM }];
      const { hits } = await store.memoryRecall(PROJECT, prompt, { limit: RECALLED });
      if (hits.length) {
        injections.push({ role: "system", place: "start", text: `What you remember about this:\n${hits.map((h) => `- ${h.name}: ${h.description}`).join("\n")}` });
        // What reaches the model was useful: MEMORY.md's caps keep it over memories nobody used.
        await store.memoryUsed(PROJECT, hits.map((h) => h.file));
      }
      // Compacted before each request when it would not fit (an imported session, a long
      // tool loop), and after the turn, for the next. The chosen endpoint summarises once
      // it has answered in this page with this URL and key: before, a wrong key or URL
      // would record a failed compaction at each send, and three of them stop
      // auto-compaction; the offline summary stands in.
      const endpoint = `${kind} ${$("base-url").value} ${$("api-key").value}`;
      // A failure is recorded (three in a row pause auto-compaction) and said at the
      // turn's end: the context then grows past the window unsummarised.
      const compactIfDue = async () => {
        const { failure } = await store.compact(id, {
          settings: { context_window: windowTokens(), keep: { recent_tokens: Math.floor(windowTokens() / 4) } }, mode: "auto",
          ...(answered.has(endpoint) ? { summarize: (prompt, maxTokens) => askEndpoint(prompt, maxTokens, kind) } : {}),
        });
        if (failure) compactionFailure = failure;
      };
      for (let step = 0; step < MAX_STEPS; step++) {
        await compactIfDue();
        // Told the model it goes to, the context sends the thinking another model signed
        // (a session imported, the model changed) as the session's client does: the API
        // would refuse its signature.
        const context = await store.providerContext(id, { provider, model: chosenModel(), injections });
        const { body } = context;
        const { reply, calls } = kind === "offline" ? offlineModel(body, context) : kind === "anthropic" ? await anthropicModel(body) : await openaiModel(body);
        if (kind !== "offline") answered.add(endpoint);
        const results = [];
        for (const call of calls) results.push(await runTool(call));
        const turn = provider === "openai"
          ? [reply, ...results.map((r) => ({ role: "tool", tool_call_id: r.id, content: r.content, ...(r.error ? { is_error: true } : {}) }))]
          : [reply, ...(results.length ? [{ role: "user", content: results.map((r) => ({ type: "tool_result", tool_use_id: r.id, content: r.content, ...(r.error ? { is_error: true } : {}) })) }] : [])];
        await store.appendTurn(id, turn, { provider, cwd: CWD });
        unanswered = null;
        await render();
        if (!calls.length) break;
      }
      await compactIfDue();
      await render();
      if (compactionFailure) {
        showError({ kind: "compaction failed", message: `${compactionFailure}: recorded; after three failures in a row auto-compaction pauses, and the model gets the whole context` });
      }
    };
    await oneTurnAtATime(id, async () => {
      try {
        await exchange();
      } catch (error) {
        // Taken out while the lock is held: the other tab's turn would continue from it.
        if (unanswered) await store.tombstone(id, unanswered.uuid).catch(() => {});
        throw error;
      }
    });
  } catch (error) {
    if (unanswered) {
      if (!$("prompt").value) $("prompt").value = prompt;
      rewindTo = rewoundTo;
    }
    await render().catch(() => {});
    showError(error);
  } finally {
    setBusy("send", false);
  }
}

// ---- rendering ---------------------------------------------------------------------

function blockView(block) {
  if (block.type === "text") return element("div", { className: "text", textContent: block.text });
  if (block.type === "thinking") return element("div", { className: "thinking", textContent: `thinking: ${block.thinking}` });
  if (block.type === "tool_use") return element("div", { className: "tool-call", textContent: `→ ${block.name}(${JSON.stringify(block.input)})` });
  // pi's blocks: a call's arguments, a result's content.
  if (block.type === "toolCall") return element("div", { className: "tool-call", textContent: `→ ${block.name}(${JSON.stringify(block.arguments ?? {})})` });
  if (block.type === "tool_result") {
    const content = typeof block.content === "string" ? block.content : (block.content ?? []).map((c) => c.text ?? `[${c.type}]`).join("\n");
    return element("div", { className: `tool-result${block.is_error ? " error" : ""}`, textContent: `← ${content}` });
  }
  return element("div", { className: "text", textContent: `[${block.type}]` });
}

function entryView(id, entry) {
  const raw = JSON.parse(entry.raw);
  if (raw.type === "system" && raw.subtype === "compact_boundary") {
    const m = raw.compactMetadata ?? {};
    return element("li", { className: "compaction", textContent: `— compacted (${m.trigger ?? "?"}): ${m.preTokens ?? "?"} → ${m.postTokens ?? "?"} tokens; what is above is summarised, not deleted —` });
  }
  if (raw.type === "compaction") {
    return element("li", { className: "compaction", textContent: `— compacted: ${raw.tokensBefore ?? "?"} tokens before; what is above is summarised, not deleted —` });
  }
  if (raw.type === "system" && raw.subtype === "microcompact_boundary") {
    const m = raw.microcompactMetadata ?? {};
    const cleared = m.compactedToolIds?.length ?? "?";
    return element("li", { className: "compaction", textContent: `— ${cleared} old tool results cleared for the model (~${m.tokensSaved ?? "?"} tokens saved); they stay in the file —` });
  }
  if (!entry.role) return null;
  const content = raw.message?.content;
  const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [{ type: "text", text: entry.text }];
  // A pi tool result is a message of its own, its content the result's.
  const piResult = raw.message?.role === "toolResult";
  const tool = piResult || (blocks.length > 0 && blocks.every((b) => b.type === "tool_result"));
  const label = raw.isCompactSummary ? "summary" : tool ? "tool" : entry.role;
  const item = element("li", { className: entry.uuid === rewindTo ? "rewind-point" : "" }, [
    element("span", { className: `role ${tool ? "tool" : entry.role}`, textContent: label }),
    element("div", { className: "body" }, piResult ? [blockView({ type: "tool_result", content: blocks, is_error: raw.message.isError })] : blocks.map(blockView)),
    element("span", { className: "meta", textContent: entry.timestamp?.slice(11, 19) ?? "" }),
  ]);
  const rewind = element("button", { className: "small rewind", textContent: "continue from here", title: "the next prompt continues from this message; nothing is deleted" });
  rewind.onclick = () => { rewindTo = entry.uuid; render().catch(showError); };
  const remove = element("button", { className: "small delete", textContent: "delete", title: "tombstone this entry: it stays in the file and leaves every load" });
  remove.onclick = () => store.tombstone(id, entry.uuid).then(render).catch(showError);
  item.append(rewind, remove);
  return item;
}

async function render() {
  await ready();
  showError(null);
  const { sessions } = await store.list();
  $("sessions").replaceChildren(...sessions.map((s) => {
    const button = element("button", { textContent: `${s.title ?? s.id} (${s.message_count})`, title: s.id });
    button.onclick = () => { $("session").value = s.id; rewindTo = null; savePage(); render().catch(showError); };
    return button;
  }));
  const id = session();
  $("rewind-note").replaceChildren(...(rewindTo ? [
    element("span", { textContent: `The next prompt continues from ${rewindTo.slice(0, 8)}; the later messages stay on their own branch.` }),
    Object.assign(element("button", { className: "small", textContent: "cancel" }), { onclick: () => { rewindTo = null; render().catch(showError); } }),
  ] : []));
  let transcript;
  try {
    transcript = await store.load(id);
  } catch (error) {
    if (error.kind !== "session-not-found") throw error;
    $("status").textContent = `No session "${id}" yet: send a prompt to start it (${store.backend}).`;
    $("transcript").replaceChildren();
    $("branches").replaceChildren();
    $("meter-bar").style.width = "0";
    return;
  }
  // Counted as it will be sent: another model's thinking left out.
  const context = await store.providerContext(id, { model: chosenModel() });
  const window = windowTokens();
  const share = Math.min(100, Math.round((100 * context.tokens) / window));
  $("meter-bar").style.width = `${share}%`;
  $("status").textContent = `${store.backend} · ${id}: ${transcript.report.entry_count} entries, ${transcript.report.tombstoned} deleted; the model gets ${context.message_count} messages, ~${context.tokens} tokens of a ${window}-token window (${share}%)${context.compacted ? ", from a compaction summary" : ""}`;
  $("transcript").replaceChildren(...transcript.chain.map((i) => entryView(id, transcript.entries[i])).filter(Boolean));
  const branches = await store.branches(id);
  $("branches").replaceChildren(...branches.map((b) => {
    const fork = element("button", { className: "small fork", textContent: "fork" });
    fork.onclick = async () => {
      try {
        const to = crypto.randomUUID();
        await store.fork(id, { from: b.leaf, to });
        $("session").value = to;
        rewindTo = null;
        savePage();
        await render();
      } catch (error) {
        showError(error);
      }
    };
    const tokens = b.usage.input + b.usage.output + b.usage.cache_read + b.usage.cache_creation;
    return element("li", { className: b.current ? "current" : "" }, [
      element("div", { textContent: `${b.current ? "● current" : "○ branch"}: ${b.text}` }),
      element("div", { className: "meta", textContent: `${b.message_count} entries · ${tokens} tokens reported${b.forks_at ? ` · leaves after ${b.forks_at.slice(0, 8)}` : ""} ` }, [fork]),
    ]);
  }));
}

// ---- memory ------------------------------------------------------------------------

/** Puts a memory in the form: what Remember then writes supersedes it. */
async function startCorrecting(file) {
  const { memory } = await store.memoryShow(PROJECT, file);
  correcting = memory.file;
  $("memory-name").value = memory.name;
  $("memory-kind").value = memory.type ?? "user";
  $("memory-body").value = memory.body.trim();
  $("correcting").textContent = `correcting ${memory.file}: the old one is kept, superseded`;
}

/** The memory panel: the current memories (or the recall hits for a query) and MEMORY.md. */
async function renderMemory() {
  await ready();
  const query = $("recall-query").value.trim();
  const shown = query
    ? (await store.memoryRecall(PROJECT, query, { limit: 10 })).hits.map((h) => ({ ...h, note: `score ${h.score.toFixed(2)}` }))
    : await store.memoryList(PROJECT);
  $("memories").replaceChildren(...shown.map((m) => {
    const forget = Object.assign(element("button", { className: "small forget", textContent: "forget" }), {
      onclick: () => store.memoryForget(PROJECT, m.file).then(renderMemory).catch(showError),
    });
    const correct = Object.assign(element("button", { className: "small correct", textContent: "correct" }), {
      onclick: () => startCorrecting(m.file).catch(showError),
    });
    return element("li", { title: m.file }, [
      element("strong", { textContent: m.name }),
      element("span", { className: "kind", textContent: m.note ?? m.type ?? "" }),
      element("div", { textContent: m.description }),
      forget, " ", correct,
    ]);
  }));
  $("memory-md").textContent = (await store.memoryLoad(PROJECT)).text || "(no memories yet)";
}

async function remember() {
  await ready();
  const body = $("memory-body").value.trim();
  const memory = { name: $("memory-name").value.trim() || body.split(/\s+/).slice(0, 4).join(" "), type: $("memory-kind").value, description: body.split("\n")[0].slice(0, 120), body };
  if (correcting) await store.memorySupersede(PROJECT, correcting, memory);
  else await store.memoryAdd(PROJECT, memory);
  correcting = null;
  $("correcting").textContent = "";
  $("memory-name").value = "";
  $("memory-body").value = "";
  await renderMemory();
}

// ---- consolidation (auto-dream) ----------------------------------------------------

/** A consolidation shown as a dry run, waiting for Apply; then the one Roll back undoes. */
let staged = null;
let applied = null;

/**
 * The offline model's consolidation: memories with the same name (in any case) merged
 * into one, the newest's text kept; nothing else changed.
 */
async function offlineConsolidation() {
  const groups = new Map();
  for (const m of await store.memoryList(PROJECT)) {
    const name = m.name.trim().toLowerCase();
    groups.set(name, [...(groups.get(name) ?? []), m]);
  }
  const ops = [];
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const newest = group.reduce((a, b) => ((b.updated_ms ?? 0) >= (a.updated_ms ?? 0) ? b : a));
    const { memory } = await store.memoryShow(PROJECT, newest.file);
    ops.push({ op: "merge", files: group.map((m) => m.file), name: memory.name, type: memory.type ?? "user", description: memory.description, body: memory.body, reason: "the same memory, written more than once" });
  }
  return (ops.length ? ops : [{ op: "noop", reason: "no two memories share a name" }]).map((op) => JSON.stringify(op)).join("\n");
}

/** A prompt sent to endpoint `kind`, without tools (it is to answer, not act); the reply's text. */
async function askEndpoint(prompt, maxTokens, kind = $("model-kind").value) {
  const body = { messages: [{ role: "user", content: prompt }], max_tokens: maxTokens };
  const { reply } = kind === "anthropic" ? await anthropicModel(body, false) : await openaiModel(body, false);
  if (typeof reply.content === "string") return reply.content;
  return Array.isArray(reply.content) ? reply.content.filter((b) => b.type === "text").map((b) => b.text).join("\n") : "";
}

/** The plan's prompt sent to the chosen endpoint; its text is the answer. */
const endpointConsolidation = (plan) => askEndpoint(plan.prompt, plan.max_tokens);

function describeStep(step) {
  const from = step.after.links?.derived_from?.length ? ` from ${step.after.links.derived_from.join(" + ")}` : "";
  return `${step.kind} ${step.file}${from}${step.reason ? ` — ${step.reason}` : ""}`;
}

/** Plans a consolidation, asks the model, and shows what it would change (a dry run). */
async function consolidate() {
  await ready();
  $("consolidate").disabled = true;
  try {
    const plan = await store.planConsolidation(PROJECT);
    const answer = $("model-kind").value === "offline" ? await offlineConsolidation() : await endpointConsolidation(plan);
    const dry = await store.applyConsolidation(PROJECT, plan, answer, { dryRun: true });
    staged = dry.steps.length ? { plan, answer } : null;
    $("apply-consolidation").disabled = !staged;
    $("consolidation").textContent = dry.steps.length
      ? `Would change (nothing is written until Apply):\n${dry.steps.map(describeStep).join("\n")}`
      : "Nothing to consolidate.";
  } finally {
    $("consolidate").disabled = false;
  }
}

async function applyConsolidation() {
  await ready();
  if (!staged) return;
  // Taken before the await: a second click applies nothing twice.
  const plan = staged;
  staged = null;
  $("apply-consolidation").disabled = true;
  let done;
  try {
    done = await store.applyConsolidation(PROJECT, plan.plan, plan.answer);
  } catch (error) {
    // Stopped part-way (a full quota, say) after it was recorded: some memories are
    // written, and applying again is refused. Roll back puts every file back.
    const recorded = await store.consolidations(PROJECT).then((all) => all.some((c) => c.id === plan.plan.id), () => false);
    if (!recorded) {
      staged = plan;
      $("apply-consolidation").disabled = false;
      throw error;
    }
    applied = plan.plan.id;
    $("rollback-consolidation").disabled = false;
    $("consolidation").textContent = `Applying ${plan.plan.id} stopped part-way (${error.message}): Roll back restores every file.`;
    await renderMemory();
    throw error;
  }
  applied = done.id;
  $("rollback-consolidation").disabled = false;
  $("consolidation").textContent = `Applied ${done.id} (recorded; Roll back restores every file):\n${done.steps.map(describeStep).join("\n")}`;
  await renderMemory();
}

async function rollbackConsolidation() {
  await ready();
  if (!applied) return;
  const id = applied;
  applied = null;
  $("rollback-consolidation").disabled = true;
  try {
    await store.rollbackConsolidation(PROJECT, id);
  } catch (error) {
    applied = id;
    $("rollback-consolidation").disabled = false;
    throw error;
  }
  $("consolidation").textContent = `Rolled back ${id}: every memory is as it was before.`;
  await renderMemory();
}

async function searchSessions() {
  await ready();
  const hits = await store.search($("search-query").value, { limit: 10 });
  $("search-hits").replaceChildren(...(hits.length ? hits.map((h) => {
    const item = element("li", { textContent: `${h.id} · ${h.role}: ${h.text}`, title: `score ${h.score.toFixed(2)}` });
    item.onclick = () => { $("session").value = h.id; rewindTo = null; savePage(); render().catch(showError); };
    return item;
  }) : [element("li", { textContent: "no message matches" })]));
}

// ---- files -------------------------------------------------------------------------

async function exportSession() {
  await ready();
  const id = session();
  const to = $("export-format").value;
  const exported = await store.exportSession(id, to);
  const [extension, type] = { claude: ["jsonl", "application/jsonl"], pi: ["jsonl", "application/jsonl"], openai: ["json", "application/json"], markdown: ["md", "text/markdown"] }[to];
  const link = element("a", { href: URL.createObjectURL(new Blob([exported.data], { type })), download: `${id}${exported.verbatim ? "" : `.${to}`}.${extension}` });
  link.click();
  URL.revokeObjectURL(link.href);
  if (to === "claude" && !UUID.test(id)) {
    showError({ kind: "exported", message: `Claude Code resumes only sessions whose id is a UUID: to open ${id} with claude --resume, import it into a session made with New session` });
  }
}


/**
 * Any agent's transcript (Claude Code, pi, Codex CLI, Gemini CLI, OpenAI messages) as a
 * new session: under its own id, or a new one when it names none or the store has it
 * (a file dropped twice is a copy); filed under the page's folder when it names none.
 * Resolves with what to tell the user, if anything.
 */
async function importFile(file) {
  await ready();
  const data = new Uint8Array(await file.arrayBuffer());
  const options = { origin: file.name };
  let imported;
  for (;;) {
    try {
      imported = await store.importSession(data, options);
      break;
    } catch (error) {
      // The core's refusals of a transcript that names no id or no folder.
      const noId = error.kind === "invalid-argument" && error.message.includes("names no session id");
      const noFolder = error.kind === "invalid-argument" && error.message.includes("which folder it belongs to");
      const taken = error.kind === "session-exists" || error.kind === "session-archived";
      if ((taken || noId) && options.id === undefined) options.id = crypto.randomUUID();
      else if (noFolder && options.cwd === undefined) options.cwd = CWD;
      else throw error;
    }
  }
  $("session").value = imported.id;
  rewindTo = null;
  savePage();
  await render();
  const notes = [];
  if (options.id) notes.push(`imported as a new session ${imported.id} (the file names none, or this store has it already)`);
  if (imported.skipped) notes.push(`${imported.skipped} records carry nothing a ${imported.format} session keeps or could not be read (reasoning, system prompts, notices, broken lines)`);
  return notes.length ? `${file.name}: ${notes.join("; ")}; the original is untouched` : null;
}

/** Imports every file dropped, one after another, and says what each needed. */
async function importFiles(files) {
  const notes = [];
  for (const file of files) {
    try {
      const note = await importFile(file);
      if (note) notes.push(note);
    } catch (error) {
      notes.push(`${file.name}: ${error.message}`);
    }
  }
  if (notes.length) showError({ kind: "imported", message: notes.join(" · ") });
}

$("backend").value = saved.backend ?? "opfs";
// A UUID, so that an exported session resumes in Claude Code (which opens no other id).
$("session").value = saved.session ?? crypto.randomUUID();
$("window").value = saved.window ?? "1500";
$("backend").onchange = () => open().catch(showError);
$("open").onclick = () => { rewindTo = null; savePage(); render().catch(showError); };
// A rewind point belongs to the session it was picked in.
$("session").oninput = () => { rewindTo = null; };
$("new-session").onclick = () => { $("session").value = crypto.randomUUID(); rewindTo = null; savePage(); render().catch(showError); };
$("window").onchange = () => { savePage(); render().catch(showError); };
$("model-kind").onchange = () => {
  const kind = $("model-kind").value;
  $("endpoint").classList.toggle("shown", kind !== "offline");
  $("base-url").placeholder = kind === "openai" ? "https://api.openai.com/v1" : "https://api.anthropic.com";
  $("model-name").placeholder = DEFAULT_MODEL[kind === "openai" ? "openai" : "anthropic"];
};
// A file dropped beside the drop zone would open in the tab, and the key typed in it go
// (text dragged into a field still lands).
const isFile = (event) => event.dataTransfer?.types.includes("Files");
window.addEventListener("dragover", (event) => isFile(event) && event.preventDefault());
window.addEventListener("drop", (event) => isFile(event) && event.preventDefault());
$("send").onclick = () => send();
$("prompt").onkeydown = (event) => { if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) send(); };
$("export").onclick = () => exportSession().catch(showError);
$("remember").onclick = () => remember().catch(showError);
$("recall").onclick = () => renderMemory().catch(showError);
$("consolidate").onclick = () => consolidate().catch(showError);
$("apply-consolidation").onclick = () => applyConsolidation().catch(showError);
$("rollback-consolidation").onclick = () => rollbackConsolidation().catch(showError);
$("recall-query").onkeydown = (event) => { if (event.key === "Enter") renderMemory().catch(showError); };
$("search").onclick = () => searchSessions().catch(showError);
$("search-query").onkeydown = (event) => { if (event.key === "Enter") searchSessions().catch(showError); };
const drop = $("drop");
drop.ondragover = (event) => { event.preventDefault(); drop.classList.add("over"); };
drop.ondragleave = () => drop.classList.remove("over");
drop.ondrop = (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  importFiles([...event.dataTransfer.files]).catch(showError);
};
open().catch(showError);
