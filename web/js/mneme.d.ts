// Types for web/js/mneme.js. Shapes are the JSON forms of mneme-core's types,
// documented in the README ("JSON output").

export type Backend = "opfs" | "indexeddb" | "memory";
/** snake_case name `S` in camelCase (`context_window` → `contextWindow`). */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;
/** Settings, policies and caps as the API takes them: each object's fields as the WIT names them or all in camelCase, at every depth. */
export type EitherSpelling<T> = T extends readonly (infer Item)[]
  ? EitherSpelling<Item>[]
  : T extends object
    ? { [K in keyof T]: EitherSpelling<T[K]> } | { [K in keyof T as CamelCase<K & string>]: EitherSpelling<T[K]> }
    : T;

export class MnemeError extends Error {
  /** The core's error kind: `session-not-found`, `storage/quota-exceeded`, `storage/locked`, … */
  kind: string;
  /** The error's fields: `{message, reason}` for `invalid-message` (the index of the
   * message, as sent), `{key}` for a storage error, `{id, uuid}` for `entry-not-found`;
   * `{}` for `invalid-argument` (its words say it all). */
  details: Record<string, unknown>;
}

export interface Entry {
  part: number; line: number; type: string;
  uuid: string | null; parent_uuid: string | null; session_id: string | null; timestamp: string | null;
  role: string | null; text: string; is_sidechain: boolean; raw: string;
  /** What the write that returned this entry took out of it; empty for entries read back. */
  redacted: Redacted[];
}
/** Secrets of one kind a write replaced with `[REDACTED:<kind>]`. */
/** `kind`: one of the kinds below (the WIT gives a string, so a kind a later core adds is one too). */
export interface Redacted { kind: SecretKind | (string & {}); count: number }
export type SecretKind =
  | "anthropic-api-key" | "openai-api-key" | "google-api-key" | "aws-access-key" | "github-token"
  | "slack-token" | "bearer-token" | "private-key" | "env-secret" | "jwt" | "stripe-key" | "url-password";
export interface SkippedLine { part: number; line: number; reason: string }
export interface LoadReport {
  entry_count: number; by_type: { type: string; count: number }[]; skipped: SkippedLine[];
  torn_tail: boolean; recovered_glued: number; invalid_utf8: number; lone_surrogates: number; tombstoned: number;
}
export interface Transcript { id: string; project: string; parts: number; entries: Entry[]; chain: number[]; report: LoadReport }
export interface SessionInfo {
  id: string; project: string; key: string; parts: number; bytes: number; entry_count: number; message_count: number;
  title: string | null; created: string | null; updated: string | null;
}
export type ChatType = "direct" | "group" | "channel" | "room" | "cron" | "hook";
export interface Field { name: string; value: string }
export interface Origin { provider?: string | null; subject?: string | null; room?: string | null; display_name?: string | null }
export interface Inbound {
  agent?: string | null; chat_type?: ChatType; provider?: string | null; id?: string | null; thread?: string | null;
  text?: string; origin?: Origin; metadata?: Field[];
}
export interface ResetPolicy { idle_minutes?: number | null; daily_reset_hour?: number | null; utc_offset_minutes?: number; ttl_ms?: number | null }
/** How direct messages are bucketed; either spelling of a case. */
export type DmScope = "main" | "per_peer" | "per_provider_peer" | "per-peer" | "per-provider-peer";
export interface RoutePolicy {
  main_key?: string; dm_scope?: DmScope; reset?: ResetPolicy;
  overrides?: { chat_type?: ChatType | null; provider?: string | null; policy: ResetPolicy }[]; reset_commands?: string[];
}
export interface Resolution {
  key: string; session_id: string; action: "created" | "continued" | "reset" | "idle" | "daily" | "expired";
  reason: string; previous_session_id: string | null; text: string;
}
export interface KeyEntry {
  key: string; session_id: string; created_ms: number; updated_ms: number; session_started_ms: number; chat_type: ChatType;
  origin: Origin; title: string | null; model: string | null; toggles: Field[]; metadata: Field[]; previous_session_ids: string[]; reason: string;
}
export interface Counters {
  input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens: number; context_tokens: number;
  compaction_count: number; memory_flush_ms: number | null; memory_flush_compaction_count: number | null; extraction_ms: number | null;
}
export interface KeyView { entry: KeyEntry; session: SessionInfo | null; counters: Counters }
export interface KeyPatch { title?: string | null; model?: string | null; origin?: Origin | null; toggles?: Field[]; metadata?: Field[] }
export interface KeyParts { chat_type: ChatType; agent: string | null; provider: string | null; id: string; thread: string | null }
export interface IndexHealth {
  generation: number; key_count: number; session_count: number; log_lines: number; damaged_lines: number; damaged_snapshots: number; torn_bytes: number;
}
/** A crab session as its file name and newest meta line say. */
export interface CrabSession { id: string; project: string; agent: string; sender: string; seq: number; title: string; created_by: string; created_at: string; uptime_secs: number }
/** What rebuilding the index did: what reading it found before, the transcripts read, rows added, corrected and dropped, keys kept, files that are no session. */
export interface RebuildReport { before: IndexHealth; session_count: number; added: number; changed: number; dropped: number; key_count: number; skipped: { key: string; reason: string }[] }
/** What a rollover did: the key on its new session, the session it left, the new session's format and first line, the context before and after. */
export interface RolledOver { entry: KeyEntry; previous_session_id: string; format: "claude" | "pi" | "crab"; boundary_uuid: string; tokens_before: number; tokens_after: number }
export interface KeysImported { imported: string[]; existing: string[]; refused: { key: string; reason: string }[] }
export interface Retention {
  /** A session untouched this long is archived (default 30 days); a key's toggle `ttl_days` sets its own. */
  ttl_ms: number;
  /** Per class of keys (toggle `class`, else the model's provider): default `ollama`, 7 days. */
  classes: { class: string; ttl_ms: number }[];
  keep_archived_ms: number;
  /** Delete archived sessions kept longer than `keep_archived_ms` (never without this). */
  delete_archived: boolean;
  /** Keep debris and the archive under this many bytes, oldest first. */
  max_disk_bytes: number | null;
  dry_run: boolean;
}
export interface ArchivedSession { id: string; project: string; archived_ms: number; files: number; bytes: number }
export interface GcReport {
  dry_run: boolean;
  archived: { id: string; project: string; last_active_ms: number; ttl_ms: number; reason: string }[];
  removed: { key: string; bytes: number; reason: string }[];
  kept_bytes: number;
}
export type ImportSource = "claude" | "pi" | "codex" | "gemini" | "openai";
export type ExportFormat = "claude" | "pi" | "openai" | "markdown";
export interface Imported {
  id: string;
  project: string;
  source: ImportSource;
  /** The dialect the new session is written in. */
  format: "claude" | "pi" | "crab";
  /** Messages in the new session's resumed context. */
  message_count: number;
  /** Records that carry content but were not carried over, unreadable lines among them, counted. */
  skipped: number;
  /** The pi format version the transcript was migrated from. */
  migrated_from: number | null;
  /** What the new session's last line records of its origin: `{source, origin, migratedFrom?}`. */
  provenance: { source: string; origin: string; migratedFrom?: number };
}
export interface Exported { format: ExportFormat; message_count: number; verbatim: boolean; data: Uint8Array }
/** `matched`: the message itself matches the query; false when it was found through its session alone. */
/** `format`: the session's dialect, which client resumes it; `cwd`: the folder it last worked in. */
export interface SearchHit { id: string; project: string; format: "claude" | "pi" | "crab"; cwd: string | null; uuid: string; role: string; timestamp: string | null; text: string; score: number; matched: boolean }
export interface Listing { sessions: SessionInfo[]; skipped: { key: string; reason: string }[] }
/** `content`: the message's blocks (a reply Claude Code split across lines, merged). `model`: the model a reply came from, when its entry names one. */
export interface ContextMessage { uuid: string; role: string; text: string; content: Block[]; is_compact_summary: boolean; model: string | null }
export interface Context { compacted: boolean; messages: ContextMessage[] }
export interface Finding { part: number; line: number; id: string }
export interface CheckReport { load: LoadReport; dangling_parents: Finding[]; orphaned_tool_uses: Finding[]; orphaned_tool_results: Finding[] }
/** `relinked`: lines whose parent was among the lines dropped, chained past them (to the parent the dropped line named, else the entry before it; null: it named none), numbered as in the original (the backup). */
export interface RepairReport { backups: string[]; dropped: SkippedLine[]; split_glued: number; fixed_utf8: number; fixed_surrogates: number; dropped_torn_tail: boolean; relinked: RelinkedLine[] }
export interface RelinkedLine { part: number; line: number; parent: string | null }
export interface Subagent { key: string; transcript: Transcript }
/** A transcript as an agent SDK's session store names it: `projects/<project>/<id>.jsonl`, or a sub-agent's at `<id>/<subpath>.jsonl`. */
export interface TranscriptKey { project: string; id: string; subpath?: string | null }
/** `updated_ms`: the last `appendLines`' time (Unix milliseconds), or the last line's timestamp for a session written elsewhere. */
export interface WrittenSession { id: string; updated_ms: number }
/** `auto`: only if the trigger says so; `manual`: now (`/compact`); `overflow`: the provider refused the context as too long. */
export type Mode = "auto" | "manual" | "overflow";
export interface CompactionSettings {
  context_window?: number;
  trigger?: { fraction: number } | { reserve: { reserve_tokens: number; floor: number } };
  keep?: { recent_tokens: number } | { recent_messages: number };
  tool_result_budget_chars?: number; max_failures?: number;
  /** The summariser's own window; a longer conversation is summarised in rolling steps. */
  summarizer_window?: number | null;
}
export interface Plan {
  trigger: "threshold" | "overflow" | "manual" | null; reason: string; blocked: string | null; action: "none" | "prune" | "summarize";
  context_window: number; limit: number; tokens_before: number; summarize: string[]; turn_prefix: string[];
  keep: string[]; keep_tokens: number; prune: { uuid: string; tool_use_id: string; chars: number }[];
  previous_summary: string | null; prompt: string; steps: string[]; turn_prefix_prompt: string | null; summary_budget_tokens: number;
  /** The session as planned on; applying refuses a session that changed since (`stale-plan`). */
  leaf: string | null; session_bytes: number;
}
export interface Applied { format: "claude" | "pi" | "crab"; action: "none" | "prune" | "summarize"; boundary_uuid: string; summary_uuid: string | null; tokens_before: number; tokens_after: number }
export interface Decision { fire: boolean; reason: string }
/** The memory-flush gate's settings; each one left out is the core's default. */
export interface FlushSettings { context_window: number; reserve_floor: number; soft_threshold: number }
/** The extraction gate's settings; each one left out is the core's default. */
export interface ExtractionSettings { min_messages: number; min_tool_calls: number }
/** The consolidation gate's settings; each one left out is the core's default. */
export interface DreamSettings { min_interval_ms: number; min_new_sessions: number; stale_lock_ms: number }

export class Mneme {
  static open(options?: { backend?: Backend; namespace?: string; storage?: object; partBytes?: number; totalBytes?: number; lockTimeoutMs?: number }): Promise<Mneme>;
  static destroy(options: { backend: Backend; namespace?: string }): Promise<void>;
  static checkBytes(bytes: Uint8Array): Promise<CheckReport>;
  /** The project of a working directory, as Claude Code names its folder (`/home/me/app` → `-home-me-app`). */
  static projectOf(cwd: string): Promise<string>;
  /** The session id Mneme keeps a session an agent SDK names `name` under; no store is read (as `store.sessionIdOf`). */
  static sessionIdOf(name: string): Promise<string>;
  /** The context window of a model Mneme knows, in tokens; null for one it does not. */
  static contextWindow(model: string): Promise<number | null>;
  /** The storage contract on two handles of one fresh, empty backend: what broke it. */
  static storageContract(a: object, b: object): Promise<string[]>;
  static silentReply(text: string): Promise<"deliver" | "hold" | "suppress">;
  readonly backend: Backend;
  readonly namespace: string;
  /** Gives back the sessions it holds, then closes the store's handles. */
  close(): Promise<void>;
}
export interface Mneme extends Sessions {}

/** A store's operations: the same in every JavaScript package (browser, Node, the edge). */
export interface Sessions {
  /** Appends a message. `cwd`, the agent's working directory, files a new session under its project (a new session needs one); left out, the line names the session's own. */
  append(id: string, message: { role: "user" | "assistant"; text: string; cwd?: string; uuid?: string; now?: number }): Promise<Entry>;
  /**
   * Appends a turn in one write (all or nothing): one message or an array, in
   * Anthropic's shape or OpenAI's (`provider: "openai"`). Every tool result must answer
   * a call of the reply it follows. `parent` rewinds to an earlier entry. A new session
   * takes `id` as given; Claude Code resumes only UUIDs (`crypto.randomUUID()`).
   * `cwd` as for `append`.
   */
  appendTurn(
    id: string,
    messages: AnthropicMessage | AnthropicMessage[] | OpenAIMessage | OpenAIMessage[],
    options?: { provider?: Provider; cwd?: string; uuid?: string; now?: number; parent?: string | null; agent?: { id: string; parent_call?: string | null } | null },
  ): Promise<Entry[]>;
  /** Imports another agent's transcript as a new session; the original is only read. An id already taken rejects with `session-exists`. */
  importSession(
    data: string | Uint8Array | ArrayBuffer,
    options?: { from?: ImportSource | null; id?: string | null; cwd?: string | null; origin?: string; uuid?: string; now?: number },
  ): Promise<Imported>;
  appendItems(id: string, items: object[], options?: { cwd?: string; uuid?: string; now?: number }): Promise<number>;
  /** The items of a session's resume context, oldest first, as added (the newest `limit` when given). */
  items(id: string, limit?: number | null): Promise<any[]>;
  /** Runs one call of Claude's memory tool (`memory_20250818`): `input` is the tool_use block's input; resolves with the tool_result's `{content, is_error}` (`is_error`: the tool refused the call, in words the model can act on). A MnemeError is the caller's or the store's failure. */
  memoryTool(project: string | null, input: MemoryToolInput, now?: number): Promise<MemoryToolResult>;
  applyCompaction(id: string, plan: Plan, summary: string, ids?: { boundary?: string; summaryUuid?: string; now?: number }): Promise<Applied>;
  /**
   * One compaction through the core's driver: plan, summarise each request with `summarize`
   * (or the offline summary), apply; a rejection or an empty answer is recorded as a failure.
   */
  compact(id: string, options?: {
    settings?: EitherSpelling<CompactionSettings>; mode?: Mode;
    summarize?: (prompt: string, maxTokens: number) => string | Promise<string>;
    boundary?: string; summaryUuid?: string; now?: number;
  }): Promise<{ plan: Plan; applied: Applied | null; failure: string | null }>;

  // Long-term memory. `project`: a project's folder name (as Claude Code names it,
  // e.g. "-home-me-app"), or null for the global memory.
  memoryAdd(project: string | null, memory: NewMemory, now?: number): Promise<Memory>;
  memoryAddMany(project: string | null, memories: NewMemory[], now?: number): Promise<Memory[]>;
  /** Writes `memory`, then marks `file` invalid and superseded by it; both are kept. Resolves with the new memory. */
  memorySupersede(project: string | null, file: string, memory: NewMemory, now?: number): Promise<Memory>;
  /** Without bodies, newest first; `since`/`until`: only memories holding from a time in that window (milliseconds since the epoch, either end null for open), as `memoryRecall`'s. */
  memoryList(project: string | null, filter?: { type?: MemoryType; topic?: string; session?: string; all?: boolean; since?: number | null; until?: number | null }): Promise<Memory[]>;
  /**
   * `since` (included) and `until` (left out), milliseconds since the epoch: only memories holding from a time in that window.
   * `embed` and `model`, the host's embedder: the scope's memories without a vector of `model` are embedded first, then the query,
   * and memories rank by meaning too; `near` gives the query's vector itself.
   */
  memoryRecall(project: string | null, query: string, options?: {
    limit?: number; all?: boolean; since?: number | null; until?: number | null;
    near?: Near | null; embed?: ((texts: string[]) => number[][] | Float32Array[] | Promise<number[][] | Float32Array[]>) | null; model?: string | null;
  }): Promise<Recalled>;
  /** The CLAUDE.md files, rules and `@` imports a session in `cwd` starts with, in Claude Code's order, from the files kept in the store. Imports outside `cwd` that a managed, project or local file (or an import of theirs) makes load only with `externalImports: true` (the user's approval, as Claude Code asks it); each is listed with `external: true`. */
  instructions(request: { cwd: string; home: string; managed?: string | null; paths?: string[]; externalImports?: boolean }): Promise<LoadedInstructions>;
  /** Routes a message to its session key and session, and records it. */
  resolve(inbound: Inbound, policy?: RoutePolicy, options?: { now?: number; newSessionId?: string }): Promise<Resolution>;
  /** Moves `key` to a new session `newSessionId` that starts from `summary` of its current one (write it from a plan that keeps nothing: `planCompaction(id, { keep: { recent_messages: 0 } }, "manual")`), in the old session's format and linked to it. The old session is not touched. */
  rollover(key: string, summary: string, options?: { newSessionId?: string; boundary?: string; summaryUuid?: string; now?: number }): Promise<RolledOver>;
  keyOf(inbound: Inbound, policy?: RoutePolicy): Promise<string>;
  parseKey(key: string): Promise<KeyParts>;
  /** The session id Mneme keeps a session an agent SDK names `name` under: `name` itself if Mneme takes it as an id (ASCII letters, digits, `-`, `_`, at most 128, not `agent-…` nor `…_part<N>`), else a mapping of it (`user:42` is `user-42_` and a hash). */
  sessionIdOf(name: string): Promise<string>;
  /** The kinds of secret taken out before anything is written: every kind by default, `[]` for none. */
  setRedaction(kinds: SecretKind[]): Promise<null>;

  // <operations: written by `cargo xtask codegen` from wit/, as js/api.js has them; do not edit>
  /**
   * Plans a compaction of session `id`: when (trigger, circuit breaker, loop
   * guard) and what (API rounds, never splitting a tool call from its result,
   * keeping at least the recent budget). Writes nothing. `mode` defaults to `auto`.
   */
  planCompaction(id: string, settings?: Partial<EitherSpelling<CompactionSettings>>, mode?: Mode): Promise<Plan>;
  /** A summary of what `plan` summarises, written without a model. */
  summarizeOffline(id: string, plan: Plan): Promise<string>;
  /** Records a failed compaction; `max_failures` in a row block auto plans. */
  recordCompactionFailure(id: string, reason: string, now?: number): Promise<null>;
  /** Whether to run the pre-compaction memory flush now (once per compaction cycle). */
  memoryFlushGate(id: string, settings?: Partial<EitherSpelling<FlushSettings>>): Promise<Decision>;
  /** Records that the memory flush ran now, closing this compaction cycle's gate. */
  recordMemoryFlush(id: string, now?: number): Promise<null>;
  /** Whether to extract memories now (messages and tool calls since the last). */
  extractionGate(id: string, settings?: Partial<EitherSpelling<ExtractionSettings>>): Promise<Decision>;
  /** Records that memories were extracted now: the gate counts from here. */
  recordExtraction(id: string, now?: number): Promise<null>;
  /**
   * Whether the next message should start a new session (never deletes): after
   * `idle_minutes` without activity, at `daily_reset_hour` (local to
   * `utc_offset_minutes`), or past `ttl_ms`; a policy that sets none of them never.
   */
  resetGate(id: string, policy?: Partial<EitherSpelling<ResetPolicy>>, now?: number): Promise<Decision>;
  /** Whether a memory consolidation is due, without taking it. */
  dreamGate(settings?: Partial<EitherSpelling<DreamSettings>>, now?: number): Promise<Decision>;
  /**
   * Takes the consolidation for `holder` if due; exactly one of several
   * concurrent callers gets it.
   */
  dreamAcquire(holder: string, settings?: Partial<EitherSpelling<DreamSettings>>, now?: number): Promise<Decision>;
  /** Releases it; `completed` records the run as the last consolidation. */
  dreamRelease(holder: string, completed: boolean, now?: number): Promise<null>;
  /**
   * Gives `key` a new session (what `/new` does); the old one is kept in its
   * `previous_session_ids`. `newSessionId` left out is a new random UUID.
   */
  resetKey(key: string, newSessionId?: string, now?: number): Promise<KeyEntry>;
  /**
   * Sets a key's labels: `title`, `model` and `origin` as `patch` gives them (an
   * empty title or model removes it), each of its `toggles` and `metadata` by name
   * (an empty value removes it); what it leaves out stays.
   */
  updateKey(key: string, patch?: Partial<EitherSpelling<KeyPatch>>): Promise<KeyEntry>;
  /** Forgets a key; its sessions stay. Returns the entry it had. */
  removeKey(key: string): Promise<KeyEntry>;
  /** A key with its current session's listing and counters. */
  key(key: string): Promise<KeyView>;
  /**
   * Keys whose metadata has every `{name, value}` of `filter`, most recently active first.
   * `filter` defaults to `[]`: every key.
   */
  keys(filter?: Field[]): Promise<KeyEntry[]>;
  /** The index's generation, sizes and anything damaged that was skipped. */
  indexReport(): Promise<IndexHealth>;
  /**
   * Rebuilds the index from the transcripts: every session read again, its rows and
   * the keys as they are saved as a new generation, so damaged or torn log lines and
   * an unreadable snapshot are left behind. Key bindings are kept as they are.
   */
  rebuildIndex(): Promise<RebuildReport>;
  /**
   * Adds the keys of an OpenClaw `sessions.json` in one write (keys the index has
   * are left as they are). Fields the index has no place for are kept in the toggle
   * `openclaw` and written back by `exportOpenclawKeys`. Transcripts are not touched.
   */
  importOpenclawKeys(data: string | Uint8Array | ArrayBuffer): Promise<KeysImported>;
  /** Every key as an OpenClaw `sessions.json`, counters from the transcripts the store has. */
  exportOpenclawKeys(): Promise<Uint8Array>;
  /**
   * The newest crab session of `agent` with `sender` (crab's `find-latest-session`:
   * the highest seq) in `project` (default `crab`); none when there is none.
   */
  crabLatest(agent: string, sender: string, project?: string | null): Promise<CrabSession | null>;
  /**
   * Starts the next crab session of `agent` with `sender`, `{agent}_{sender}_{seq}`
   * with seq one past the latest, its meta line written. `createdBy` defaults to `user`.
   */
  crabStart(agent: string, sender: string, options?: { project?: string | null; createdBy?: string; now?: number }): Promise<CrabSession>;
  /** A crab session as its name and newest meta line say. */
  crabShow(id: string): Promise<CrabSession>;
  /**
   * Titles a crab session: its file renamed `{agent}_{sender}_{seq}_{title slug}`
   * and a meta line appended (never a rewrite). Returns it under its new id.
   */
  crabSetTitle(id: string, title: string): Promise<CrabSession>;
  /** Adds `secs` to a crab session's `uptime_secs`, as an appended meta line. */
  crabAddUptime(id: string, secs: number): Promise<CrabSession>;
  /**
   * Whether `key`'s session should roll over: its context (from its last
   * compaction on) holds `maxContextTokens` or more.
   */
  rolloverGate(key: string, maxContextTokens: number): Promise<Decision>;
  /** Changes fields in place (supersede when the fact itself changed). */
  memoryUpdate(project: string | null, file: string, change: MemoryChange, now?: number): Promise<Memory>;
  /** Archives a memory: kept (listed with `all`), out of MEMORY.md and default recall. */
  memoryForget(project: string | null, file: string, now?: number): Promise<Memory>;
  /** Records that `from` relates to `to`. */
  memoryLink(project: string | null, from: string, kind: LinkKind, to: string, now?: number): Promise<Memory>;
  /** One memory with its body and its supersession history. */
  memoryShow(project: string | null, file: string): Promise<Shown>;
  /**
   * At most `limit` memories of `project` with no vector of `model` for what they say
   * now, each with its text: the host embeds `texts` and gives the vectors to
   * `applyEmbedding`, until a plan comes back empty. `limit` defaults to `64`.
   */
  planEmbedding(project: string | null, model: string, limit?: number): Promise<EmbeddingPlan>;
  /**
   * Keeps the vectors the host's embedder made of `plan`'s texts, one per text in its
   * order, beside the recall index (`.mneme/vectors.jsonl`; in memory only on a
   * read-only store), where `memoryRecall` with `near` finds them. Returns how many
   * were kept: none of a memory that says something else since the plan. A vector
   * of another length than the model's others is `invalid-argument`.
   */
  applyEmbedding(project: string | null, plan: EmbeddingPlan, vectors: number[][]): Promise<number>;
  /**
   * MEMORY.md as a model should load it within `caps` (by default Claude Code's: 200
   * lines, 25,000 UTF-16 units), never cut in silence: the
   * least recently useful lines go first; a line of a memory archived or superseded
   * (a write cut short leaves one; the next write of the scope takes it out) never loads.
   */
  memoryLoad(project: string | null, caps?: Partial<EitherSpelling<Caps>>): Promise<Loaded>;
  /** Reads the memory folder again and rewrites the recall index. */
  memoryReindex(project: string | null): Promise<MemoryIndexReport>;
  /**
   * Records that memories were useful now (put in a model's context, cited by it), so
   * `memoryLoad` keeps them over memories nobody used. Recall records nothing by itself.
   * One write; `updated_ms` stays. Returns the memories as written, bodies included.
   */
  memoryUsed(project: string | null, files: string[], now?: number): Promise<Memory[]>;
  /**
   * Makes `memoryRecall` and `search` hybrid: `table` is a static embedding table
   * in the text form GloVe, word2vec and fastText publish (a word per line, then its
   * values; most frequent words first), and a memory close in meaning to the query
   * is found without a word in common. None goes back to words alone. Kept by this
   * store handle in memory, never written: set it after each open. A table that
   * does not read is `invalid-argument` and the previous table stays.
   */
  setEmbeddings(table?: string | Uint8Array | ArrayBuffer | null): Promise<EmbeddingsInfo | null>;
  /**
   * Plans an extraction from session `id` into `project` (run it when the extraction
   * gate fires): the host has a model answer `prompt`, then calls `applyExtraction`.
   */
  planExtraction(project: string | null, id: string): Promise<ExtractionPlan>;
  /**
   * Checks every line of the model's answer (one JSON object per line: add, update,
   * supersede, noop), then writes the memories and records the extraction. An answer
   * that does not read is `invalid-answer` and writes nothing.
   */
  applyExtraction(project: string | null, plan: ExtractionPlan, answer: string, now?: number): Promise<Extracted>;
  /** Records a failed extraction (the model failed, or its answer did not read). */
  recordExtractionFailure(id: string, reason: string, now?: number): Promise<null>;
  /**
   * Plans a consolidation of `project`'s memory (take the gates' dream lock first):
   * the host has a model answer `prompt`, then calls `applyConsolidation`.
   */
  planConsolidation(project: string | null, now?: number): Promise<ConsolidationPlan>;
  /**
   * Checks every line of the model's answer (merge, supersede, update, add, archive,
   * link, noop) and stages the changes; unless `dryRun`, records them in the scope's
   * consolidation log and writes them (`rollbackConsolidation` undoes it by the
   * returned `id`). Nothing is deleted. An answer that does not
   * read is `invalid-answer` and stages nothing. `dryRun` defaults to `false`.
   */
  applyConsolidation(project: string | null, plan: ConsolidationPlan, answer: string, options?: { dryRun?: boolean; now?: number }): Promise<Consolidation>;
  /**
   * Undoes a consolidation: changed memories get their text back, added ones are
   * archived. Refuses, writing nothing, when a memory changed after it.
   */
  rollbackConsolidation(project: string | null, id: string, now?: number): Promise<Consolidation>;
  /** The consolidations recorded in `project`, oldest first. */
  consolidations(project: string | null): Promise<Consolidation[]>;
  /** Keeps an instruction file at absolute `path` (key `files/<path>`). */
  writeFile(path: string, text: string): Promise<null>;
  /** The instruction file kept at absolute `path`, or none. */
  readFile(path: string): Promise<string | null>;
  /** Removing a file that is not there is fine. */
  removeFile(path: string): Promise<null>;
  /**
   * Soft-deletes entry `uuid` by appending a tombstone
   * (`{"type":"tombstone","deleted_uuid":…}`); it applies across all parts.
   */
  tombstone(id: string, uuid: string, now?: number): Promise<null>;
  /** Every live entry of session `id`, its main chain and the load report. */
  load(id: string): Promise<Transcript>;
  /**
   * The context a model resumes with: the main chain's messages after its
   * last compaction boundary.
   */
  context(id: string): Promise<Context>;
  /**
   * What to send a model next, in `provider`'s shape: the context with roles
   * alternating, split replies merged, every call answered, a result whose
   * call is gone (deleted, summarised away) left out, `injections` placed (and
   * never written; system ones join the system prompt, whatever their place).
   * `model`, the model the request goes to: the thinking of replies another
   * model wrote is then sent as the session's client sends it (Claude Code
   * leaves it out, pi sends it as text), since the API refuses its signature
   * in a request to another model; without it, thinking is sent as recorded.
   * `provider` defaults to `anthropic` and `injections` defaults to `[]`.
   */
  providerContext(id: string, options?: { provider?: Provider; model?: string | null; injections?: Injection[] }): Promise<ProviderContext>;
  /** Every branch (each leaf message), the current one first. */
  branches(id: string): Promise<Branch[]>;
  /**
   * The token ledger: usage in all and per branch, priced when `prices` (dollars
   * per million tokens of each kind) are given.
   */
  usage(id: string, prices?: Prices | null): Promise<Ledger>;
  /**
   * A new session `to` in the same project holding the conversation from its
   * root to entry `from` (where resume is when none), written as the
   * session's client writes a fork (Claude Code: `forkedFrom` on each line; pi:
   * `parentSession` in the header). The original is untouched. Returns the lines
   * written (their `session_id` is `to`). `to` left out is a new random UUID.
   */
  fork(id: string, options?: { from?: string | null; to?: string; now?: number }): Promise<Entry[]>;
  /**
   * Session `id` in `to`: in its own dialect as stored (`verbatim`); in
   * another, as the conversation it resumes to (new line ids derive from `uuid`).
   * `data` is the bytes; `message_count` the messages they hold. `uuid` left out is a new random UUID.
   */
  exportSession(id: string, to: ExportFormat, uuid?: string): Promise<Exported>;
  /**
   * One cleanup pass: archives sessions past their time to live, deletes what
   * `policy` asks, reports all of it (and only reports, in a dry run).
   */
  gc(policy?: Partial<EitherSpelling<Retention>>, now?: number): Promise<GcReport>;
  /** Moves session `id` into the archive now, every file of it. */
  archive(id: string, now?: number): Promise<ArchivedSession>;
  /** Every archived session, oldest first. */
  archived(): Promise<ArchivedSession[]>;
  /**
   * Puts archived session `id` back; `session-exists` if a session has the id again,
   * `invalid-argument` if the session is live (not archived).
   */
  restore(id: string): Promise<ArchivedSession>;
  /** The load report plus dangling parents and orphaned tool calls. */
  check(id: string): Promise<CheckReport>;
  /**
   * The session's sub-agent transcripts (`<id>/subagents/agent-*.jsonl`, and
   * flat `agent-*.jsonl` files whose entries name the session).
   */
  subagents(id: string): Promise<Subagent[]>;
  /**
   * Keeps session `id` open for writing: takes its lock and keeps it until
   * `release` (or until the store is closed), so every write after this skips
   * locking and listing and costs one append. Other writers wait for the lock
   * and then fail with `storage/locked`. The session must exist. Programs that take no
   * lock (Claude Code) must not write it meanwhile.
   */
  hold(id: string): Promise<null>;
  /** Gives back the lock `hold` took; a session not held is left alone. */
  release(id: string): Promise<null>;
  /**
   * Removes every part, sub-agent file and sidecar of the session; returns the
   * keys removed, the first part last.
   */
  remove(id: string): Promise<string[]>;
  /**
   * Rewrites broken parts (unreadable lines, glued objects, invalid UTF-8,
   * torn tail) after saving each original as `<part>.bak-<now-ms>`; a line whose
   * parent was an unreadable line is chained past it (`relinked`). A part
   * another program wrote to meanwhile is left alone (`storage/changed`).
   */
  repair(id: string, now?: number): Promise<RepairReport>;
  /**
   * Every session in the store, most recently updated first, and the files
   * that could not be listed as sessions.
   */
  list(): Promise<Listing>;
  /**
   * The `limit` messages across every session that best match `query` (the
   * recall index memories use: the user's own words counting twice, each session
   * read as one text too), best first:
   * only `project`'s sessions when it is named (`invalid-project` for a name no
   * folder can have), only messages in `window` (one without a timestamp counts
   * as 1970). A hit's `matched` is false when it was found through its session
   * alone. `limit` defaults to `10`. `since` (included) and `until` (left out) bound `window`, in milliseconds since the epoch (null: open).
   */
  search(query: string, options?: { limit?: number; project?: string | null; since?: number | null; until?: number | null }): Promise<SearchHit[]>;
  /** Forgets what the store knows of session `id`: the next call reads it again. */
  reopen(id: string): Promise<null>;
  /**
   * Appends `lines` (each the JSON text of one object, as the session's
   * client wrote it) to the transcript at `key` in one storage append. A line
   * whose `uuid` the transcript holds already is left out, so a batch retried
   * after a failure that had in fact landed, or a transcript imported again, is
   * written once; lines without one are always written. A line cut short by a
   * crash is moved aside first. Secrets are taken out as from every line; the
   * store's size limits do not apply (these are another program's files).
   * Returns how many lines were written; given none, writes nothing (no empty
   * file).
   */
  appendLines(key: TranscriptKey, lines: string[], now?: number): Promise<number>;
  /**
   * The lines of the transcript at `key` as they were appended, oldest first
   * (a line cut short by a crash is left out); none if nothing was ever
   * written there.
   */
  readLines(key: TranscriptKey): Promise<string[] | null>;
  /**
   * The sessions of `project` that have a transcript of their own (one with
   * sub-agent transcripts only is not listed).
   */
  writtenSessions(project: string): Promise<WrittenSession[]>;
  /**
   * The subpaths of session `id`'s other transcripts in `project` (its
   * sub-agents': `subagents/agent-<id>`), sorted.
   */
  subpaths(project: string, id: string): Promise<string[]>;
  /**
   * Removes the transcript at `key`; the session's own takes every file of the
   * session with it (its parts, its sub-agents'). Removing what is not there is
   * fine.
   */
  removeTranscript(key: TranscriptKey): Promise<null>;
  /**
   * Soft-deletes session `id`'s newest item (a tombstone; the line stays in
   * the file) and returns it; none when there is none. The
   * session's lock is held from the read to the tombstone, so another pop
   * waits (`storage/locked` past the storage's wait); a writer that takes no
   * lock is caught by writing only if the session is still as read, and
   * `stale-plan` when such writers raced it eight times (try again).
   */
  popItem(id: string, now?: number): Promise<any | null>;
  // </operations>
}

export type MemoryType = "user" | "feedback" | "project" | "reference";
export type LinkKind = "relates_to" | "contradicts" | "extends" | "derived_from";
/** One call of the memory tool as the model gets it back: the fields of its tool_result block (`is_error`: the tool refused the call, `content` says why). */
export interface MemoryToolResult { content: string; is_error: boolean }
/** The input of a tool_use block of Claude's memory tool (`memory_20250818`). */
export type MemoryToolInput =
  | { command: "view"; path: string; view_range?: [number, number] }
  | { command: "create"; path: string; file_text: string }
  | { command: "str_replace"; path: string; old_str: string; new_str: string }
  | { command: "insert"; path: string; insert_line: number; insert_text: string }
  | { command: "delete"; path: string }
  | { command: "rename"; old_path: string; new_path: string };
export interface Links { relates_to: string[]; contradicts: string[]; extends: string[]; derived_from: string[] }
/** One memory file; times are milliseconds since the epoch. */
export interface Memory {
  file: string; name: string; description: string; type: MemoryType | null; body: string;
  created_ms: number | null; updated_ms: number | null; used_ms: number | null; valid_from_ms: number | null; invalid_at_ms: number | null;
  superseded_by: string | null; archived_ms: number | null; confidence: number | null;
  topics: string[]; links: Links; session: string | null; entry: string | null;
  /** Frontmatter lines neither Claude Code nor Mneme defines, kept verbatim. */
  extra: string[];
  /** What the write that returned this memory took out of it; empty for memories read back. */
  redacted: Redacted[];
}
export interface NewMemory {
  name: string; type: MemoryType; description?: string; body?: string; topics?: string[]; links?: Partial<Links>;
  confidence?: number | null; session?: string | null; entry?: string | null; valid_from_ms?: number | null;
}
export interface MemoryChange { name?: string | null; type?: MemoryType | null; description?: string | null; body?: string | null; topics?: string[] | null; confidence?: number | null }
export interface InstructionFile {
  path: string; kind: "managed" | "user" | "user_rule" | "project" | "project_rule" | "local" | "import";
  imported_by: string | null;
  /** An import outside the working directory made by a managed, project or local file: loaded only with `externalImports`. */
  external: boolean; loaded: boolean; reason: string;
}
/** The loaded files under Claude Code's headers, and every file considered with why it was loaded or skipped. */
export interface LoadedInstructions { text: string; files: InstructionFile[] }
export interface ConsolidationPlan { id: string; prompt: string; max_tokens: number; known: string[]; sessions: string[]; since_ms: number | null }
export interface ConsolidationStep {
  kind: "added" | "updated" | "superseded" | "archived" | "linked"; file: string;
  /** null for an added memory. */
  before: Memory | null; after: Memory; reason: string | null;
}
/** A consolidation as recorded; `applied` is false for a dry run. */
export interface Consolidation { id: string; at_ms: number; sessions: string[]; steps: ConsolidationStep[]; applied: boolean; rolled_back_ms: number | null }
export interface ExtractionPlan { id: string; prompt: string; max_tokens: number; message_count: number; entry: string | null; known: string[]; failures: number }
/** The recall index was brought up to date first (files Claude Code or a crash left behind it). */
export interface MemoryIndexReport { reason: string; files: string[] }
/** What of MEMORY.md a model loads: lines, and UTF-16 units (Claude Code: 200 lines, 25,000 units). */
export interface Caps { lines: number; units: number }
/** A memory with the chain of memories it superseded or that superseded it. */
export interface Shown { memory: Memory; history: Memory[] }
/** MEMORY.md as a model loads it, and what the caps left out. */
export interface Loaded { text: string; left_out: string[] }
/** What an extraction wrote: memories added, updated, and the files it superseded. */
export interface Extracted { added: Memory[]; updated: Memory[]; superseded: string[] }
/** What `setEmbeddings` read: table lines read as a word and its vector, the recall stems they gave, the vector size, lines skipped. */
export interface EmbeddingsInfo { words: number; terms: number; dimensions: number; skipped: number }
export interface EmbeddingPlan { model: string; files: string[]; versions: string[]; texts: string[] }
export interface Near { model: string; vector: number[] }
export interface Recalled {
  hits: { file: string; name: string; description: string; type: MemoryType | null; score: number; current: boolean; matched: boolean }[];
  report: MemoryIndexReport | null;
}

export type Provider = "anthropic" | "openai";

/** Where the API may cache the prompt up to: taken on input and not written (where to cache is each request's choice). */
export interface CacheControl { cache_control?: { type: "ephemeral"; ttl?: "5m" | "1h" } | null }
/** Turns a document's or search result's citations on. */
export interface CitationsSetting { enabled: boolean }
/**
 * A content block of Anthropic's Messages API (Claude Code's native shape). Server
 * tools' blocks are kept as given and sent back as they came; so is a block of a type
 * newer than these.
 */
export type Block = CacheControl & (
  | { type: "text"; text: string; citations?: Record<string, unknown>[] | null }
  | { type: "thinking"; thinking: string; signature?: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content?: string | Block[]; is_error?: boolean }
  | { type: "server_tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "web_search_tool_result"; tool_use_id: string; content: Record<string, unknown>[] | Record<string, unknown> }
  | { type: "image"; source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string } }
  | { type: "document"; source: Record<string, unknown>; title?: string | null; context?: string | null; citations?: CitationsSetting | null }
  | { type: "search_result"; source: string; title: string; content: { type: "text"; text: string }[]; citations?: CitationsSetting }
);

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | Block[];
  /** A reply's API message id; split lines of one reply share it. */
  id?: string;
  model?: string;
  stop_reason?: string;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
}

export interface OpenAIMessage {
  role: "user" | "assistant" | "tool";
  content?: string | null | ({ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } })[];
  tool_calls?: { id: string; type?: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  /** A `tool` message reporting a failure (Mneme's extension: stored as the result's `is_error`). */
  is_error?: boolean;
  id?: string;
  model?: string;
  finish_reason?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
}

/** Ephemeral context: placed in a provider context, never written. */
export interface Injection {
  role: "system" | "user" | "assistant";
  place: "start" | "before_last_prompt" | "end";
  text: string;
}

export interface ProviderContext {
  provider: Provider;
  /** The request: Anthropic `{system?, messages}`, OpenAI `{messages}`, ready to extend with the model and tools. */
  body: { system?: string | Block[]; messages: AnthropicMessage[] } | { messages: OpenAIMessage[] };
  /** Messages in `body`. */
  message_count: number;
  compacted: boolean;
  tokens: number;
  /** Calls without a result, each given a synthetic error result. */
  interrupted: string[];
}

export interface Usage { input: number; output: number; cache_read: number; cache_creation: number }
/** Dollars per million tokens. */
export interface Prices { input: number; output: number; cache_read: number; cache_creation: number }

/** A sub-agent's replies, each counted once, from its own transcript (`agent-<id>.jsonl`). */
export interface AgentUsage { agent: string; usage: Usage; cost: number | null; replies: number }

export interface Branch {
  /** The uuid of the branch's last message. */
  leaf: string;
  /** The branch resume follows. */
  current: boolean;
  role: string | null;
  text: string;
  timestamp: string | null;
  /** Message entries from the root to the leaf. */
  message_count: number;
  /** The newest message it shares with the current branch. */
  forks_at: string | null;
  usage: Usage;
  cost: number | null;
}

/** `total`: the session's own replies; `subagents`: each sub-agent's, apart from it. */
export interface Ledger { total: Usage; cost: number | null; replies: number; branches: Branch[]; subagents: AgentUsage[] }
