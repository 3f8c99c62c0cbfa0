// An agent loop written against the package's TypeScript declarations, with `strict` on:
// `typed.mjs` type-checks it (a declaration the code does not match fails the test) and
// then runs it on a folder, so what the types promise is what the package returns.
import { Mneme, MnemeError } from "../js/mneme.js";
import type { AnthropicMessage, Block, Branch, Injection, Ledger, OpenAIMessage, Plan, ProviderContext } from "../js/mneme.js";

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

/** A reply in Anthropic's shape, as a model would send it. */
function reply(content: Block[], stop: "end_turn" | "tool_use", input: number): AnthropicMessage {
  return { role: "assistant", content, id: `msg_${input}`, model: "claude-sonnet-4-5", stop_reason: stop, usage: { input_tokens: input, output_tokens: 20, cache_read_input_tokens: 5 } };
}

/** Runs the loop in the empty folder `root`; says which steps it got through. */
export async function run(root: string): Promise<string[]> {
  const seen: string[] = [];
  const mneme = await Mneme.open({ root, durability: "buffered" });
  try {
    const id = "5d4c3b2a-1000-4000-8000-000000000001";
    // A turn of every block the declarations name, server tools and citations included.
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    const turn: AnthropicMessage[] = [
      { role: "user", content: [
        { type: "text", text: "What changed in the release notes? Look them up.", cache_control: { type: "ephemeral" } },
        { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
        { type: "document", source: { type: "text", media_type: "text/plain", data: "Release 2: faster resume." }, title: "notes", citations: { enabled: true } },
        { type: "search_result", source: "https://example.com/notes", title: "Notes", content: [{ type: "text", text: "Release 2 is out." }] },
      ] },
      reply([
        { type: "thinking", thinking: "I should search, then read the file.", signature: "c2lnbmF0dXJl" },
        { type: "redacted_thinking", data: "ZW5jcnlwdGVk" },
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "release notes" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.com/notes", title: "Notes", encrypted_content: "eA==" }] },
        { type: "text", text: "Release 2 makes resume faster.", citations: [{ type: "web_search_result_location", url: "https://example.com/notes", title: "Notes", cited_text: "faster", encrypted_index: "eA==" }] },
        { type: "tool_use", id: "toolu_read", name: "Read", input: { file_path: "/w/NOTES.md" } },
      ], "tool_use", 100),
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_read", content: [{ type: "text", text: "# Notes" }], is_error: false }] },
      reply([{ type: "text", text: "The notes say the same." }], "end_turn", 140),
    ];
    const written = await mneme.appendTurn(id, turn, { cwd: "/w" });
    // Held from here on: each later write is one append under a lock kept.
    await mneme.hold(id);
    check(written.length >= turn.length, `a turn of ${turn.length} messages wrote ${written.length} lines`);
    const raw = written.map((entry) => entry.raw).join("\n");
    for (const kind of ["server_tool_use", "web_search_tool_result", "search_result", "citations", "redacted_thinking", "document"]) {
      check(raw.includes(kind), `the written turn lost ${kind}`);
    }
    check(!raw.includes("cache_control"), "cache_control was written");
    seen.push("turn");

    // The next request, with an injection; every server block goes back as it came.
    const injections: Injection[] = [{ role: "system", place: "start", text: "Be brief." }, { role: "user", place: "before_last_prompt", text: "recalled: the user reads release notes" }];
    const context: ProviderContext = await mneme.providerContext(id, { provider: "anthropic", injections });
    const body = context.body as { system?: unknown; messages: { role: string; content: Block[] | string }[] };
    const blocks = body.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
    check(blocks.some((b) => b.type === "server_tool_use" && b.name === "web_search"), "the server tool call is not in the context");
    check(blocks.some((b) => b.type === "text" && (b.citations?.length ?? 0) === 1), "the citation is not in the context");
    check(context.provider === "anthropic" && context.message_count === body.messages.length && context.interrupted.length === 0, JSON.stringify(context).slice(0, 300));
    seen.push("context");

    // OpenAI-shaped: a call left unanswered gets a synthetic result in the request.
    const call: OpenAIMessage[] = [
      { role: "user", content: "and the tests?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_t", type: "function", function: { name: "Bash", arguments: '{"command":"cargo test"}' } }], usage: { prompt_tokens: 200, completion_tokens: 9 } },
    ];
    await mneme.appendTurn(id, call, { provider: "openai", cwd: "/w" });
    const openai: ProviderContext = await mneme.providerContext(id, { provider: "openai" });
    check(openai.interrupted.length === 1 && openai.interrupted[0] === "call_t", JSON.stringify(openai.interrupted));
    seen.push("openai");

    // A rewind to the first reply's turn, then branches, usage priced, a fork.
    const prompt = written[0].uuid;
    check(prompt !== null, "the first line has no uuid");
    await mneme.appendTurn(id, { role: "assistant", content: "rewound" }, { parent: prompt });
    const branches: Branch[] = await mneme.branches(id);
    check(branches.length === 2 && branches.filter((b) => b.current).length === 1 && branches[0].text === "rewound", JSON.stringify(branches));
    const ledger: Ledger = await mneme.usage(id, { input: 3, output: 15, cache_read: 0.3, cache_creation: 3.75 });
    check(ledger.total.input === 440 && ledger.total.output === 49 && ledger.replies === 3 && ledger.cost !== null && ledger.subagents.length === 0, JSON.stringify(ledger));
    const forked = await mneme.fork(id, { from: branches[1].leaf, to: "5d4c3b2a-1000-4000-8000-000000000002" });
    check(forked.length > 0 && forked.every((e) => e.session_id === "5d4c3b2a-1000-4000-8000-000000000002"), JSON.stringify(forked).slice(0, 300));
    seen.push("branches");

    // Compaction, summarised by a callback as a host's model would.
    const { plan, applied, failure }: { plan: Plan; applied: unknown; failure: string | null } = await mneme.compact(id, {
      mode: "manual",
      settings: { keep: { recent_messages: 1 } },
      summarize: async (request: string, maxTokens: number) => `Summary of ${request.length} characters in at most ${maxTokens} tokens.`,
    });
    check(plan.trigger === "manual" && applied !== null && failure === null, JSON.stringify({ plan: plan.reason, failure }));
    check((await mneme.context(id)).compacted, "the context does not start at the summary");
    // Settings in camelCase and a summariser that answers at once, as the README allows.
    const planned: Plan = await mneme.planCompaction(id, { contextWindow: 200_000, keep: { recentMessages: 1 } }, "manual");
    check(planned.context_window === 200_000, JSON.stringify(planned.context_window));
    check((await mneme.gc({ dryRun: true, ttlMs: 400 * 86_400_000 })).dry_run, "a dry run in camelCase ran for real");
    const again = await mneme.compact(id, { mode: "manual", settings: { keep: { recentMessages: 1 } }, summarize: (request: string) => `At once: ${request.length}.` });
    check(again.failure === null, String(again.failure));
    seen.push("compaction");

    // Errors carry their kind.
    try {
      await mneme.appendTurn(id, { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_nope", content: "x" }] });
      check(false, "a result answering no call was written");
    } catch (error) {
      check(error instanceof MnemeError && error.kind === "invalid-message", String(error));
    }
    seen.push("errors");
    await mneme.release(id);
  } finally {
    await mneme.close();
  }
  return seen;
}
