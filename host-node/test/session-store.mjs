// `@mneme/node/claude-agent-sdk` against the real Claude Agent SDK for TypeScript
// (@anthropic-ai/claude-agent-sdk): each contract of the SDK's session-storage guide,
// tested here in our own words; MnemeSessionStore type-checked against the SDK's own
// `SessionStore`; and end to end — the SDK's query() with Mneme as its sessionStore,
// its bundled Claude Code against a local mock Messages API, then a resume from an
// empty config folder, so only the store can supply the transcript.
//
// Run by `cargo xtask test` after host-node/build.mjs.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { REPLY, startMockApi } from "../../clients/mock-api.mjs";
import { assert, finish, test } from "../../tests/js/runner.mjs";
import { MnemeSessionStore } from "../js/claude-agent-sdk.js";
import { Mneme } from "../js/mneme.js";
import { PgStorage } from "../js/postgres.js";
import { PostgresCluster } from "../../tests/js/postgres.mjs";
import { OPTIONS, problems } from "./typescript.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "mneme-session-store-"));
const KEY = { projectKey: "proj", sessionId: "sess" };
let made = 0;

// Each contract and the end to end run on a folder and on PostgreSQL (a throwaway
// cluster: every host of a deployment resumes every session).
const cluster = new PostgresCluster();

/** Where the contracts run, each with a fresh store of its own per contract. */
function* STORES() {
  yield ["folder", async () => new MnemeSessionStore(await Mneme.open({ root: join(scratch, `store-${made++}`), durability: "buffered" }))];
  yield ["PostgreSQL", async () => new MnemeSessionStore(await Mneme.open({ storage: new PgStorage(cluster.url, { schema: `store_${made++}` }) }))];
}

const same = (a, b) => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
  return value;
}

try {
  for (const [where, fresh] of STORES()) {
    await test(`entries load back deep-equal, in the order of the appends [${where}]`, async () => {
      const store = await fresh();
      const first = [{ type: "user", uuid: "z", nested: { x: [1, 2] } }, { type: "assistant", uuid: "a", text: "café" }];
      await store.append(KEY, first);
      await store.append(KEY, [{ type: "custom-title", customTitle: "t" }]);
      assert(same(await store.load(KEY), [...first, { type: "custom-title", customTitle: "t" }]), "what was appended, in order");
    });

    await test(`a key never written loads as null, an empty append writes nothing [${where}]`, async () => {
      const store = await fresh();
      assert((await store.load(KEY)) === null, "unknown key");
      await store.append(KEY, []);
      assert((await store.load(KEY)) === null, "an empty append on a new key left a transcript");
      await store.append(KEY, [{ type: "x", uuid: "a" }]);
      await store.append(KEY, []);
      assert((await store.load(KEY)).length === 1, "an empty append on a key changed it");
      assert((await store.load({ ...KEY, subpath: "subagents/agent-9" })) === null, "a missing subpath of a session that exists");
    });

    await test(`what is not a SessionKey or a list of entries is refused in the SDK's names [${where}]`, async () => {
      const store = await fresh();
      const refusedWith = async (promise, words) => {
        const error = await promise.then(() => undefined, (error) => error);
        assert(error?.kind === "invalid-argument" && error.message.includes(words), `expected a refusal saying "${words}", got ${error}`);
      };
      await refusedWith(store.append(KEY, { type: "user", uuid: "a" }), "entries must be an array of transcript entries, not object");
      await refusedWith(store.append({ project_key: "proj", session_id: "sess" }, []), "the key must be a SessionKey, { projectKey, sessionId, subpath? }");
      await refusedWith(store.load(null), "the key must be a SessionKey");
      await refusedWith(store.listSubkeys({ projectKey: "proj" }), "the key must be a SessionKey");
      assert((await store.load(KEY)) === null, "nothing was written");
    });

    await test(`subpaths and projects are keys of their own [${where}]`, async () => {
      const store = await fresh();
      await store.append(KEY, [{ type: "x", uuid: "m" }]);
      await store.append({ ...KEY, subpath: "subagents/agent-1" }, [{ type: "x", uuid: "s" }]);
      await store.append({ projectKey: "other", sessionId: "sess" }, [{ type: "x", uuid: "o" }]);
      assert((await store.load(KEY)).map((e) => e.uuid).join() === "m", "main");
      assert((await store.load({ ...KEY, subpath: "subagents/agent-1" })).map((e) => e.uuid).join() === "s", "subpath");
      assert((await store.load({ projectKey: "other", sessionId: "sess" })).map((e) => e.uuid).join() === "o", "other project");
    });

    await test(`listSessions: a project's own sessions, times in epoch milliseconds, none for sub-agents alone [${where}]`, async () => {
      const store = await fresh();
      await store.append({ projectKey: "P", sessionId: "s1" }, [{ type: "x" }]);
      await store.append({ projectKey: "P", sessionId: "s2" }, [{ type: "x" }]);
      await store.append({ projectKey: "Q", sessionId: "s3" }, [{ type: "x" }]);
      await store.append({ projectKey: "P", sessionId: "only-agents", subpath: "subagents/agent-1" }, [{ type: "x" }]);
      const listed = await store.listSessions("P");
      assert(listed.map((s) => s.sessionId).sort().join() === "s1,s2", JSON.stringify(listed));
      assert(listed.every((s) => Number.isInteger(s.mtime) && s.mtime > 1e12), JSON.stringify(listed));
      assert((await store.listSessions("never-seen")).length === 0, "an unknown project");
    });

    await test(`delete: a session takes its sub-agents with it, a subpath only itself, an unknown key is fine [${where}]`, async () => {
      const store = await fresh();
      for (const subpath of [undefined, "subagents/agent-1", "subagents/agent-2"]) await store.append({ ...KEY, subpath }, [{ type: "x" }]);
      await store.append({ projectKey: "proj", sessionId: "sess2" }, [{ type: "x" }]);
      await store.delete({ ...KEY, subpath: "subagents/agent-1" });
      assert((await store.load({ ...KEY, subpath: "subagents/agent-1" })) === null, "the subpath is gone");
      assert((await store.listSubkeys(KEY)).join() === "subagents/agent-2", "the other subpath stays");
      assert((await store.load(KEY)) !== null, "the session stays");
      await store.delete(KEY);
      assert((await store.load(KEY)) === null && (await store.load({ ...KEY, subpath: "subagents/agent-2" })) === null, "the cascade");
      assert((await store.listSubkeys(KEY)).length === 0, "no subkeys left");
      assert((await store.listSessions("proj")).map((s) => s.sessionId).join() === "sess2", "the other session stays");
      await store.delete({ projectKey: "proj", sessionId: "never-written" });
    });

    await test(`listSubkeys: the session's sub-agent transcripts, never its own, never another's [${where}]`, async () => {
      const store = await fresh();
      await store.append({ ...KEY, subpath: "subagents/b" }, [{ type: "x" }]);
      await store.append({ ...KEY, subpath: "subagents/a" }, [{ type: "x" }]);
      await store.append({ projectKey: "proj", sessionId: "other", subpath: "subagents/c" }, [{ type: "x" }]);
      assert((await store.listSubkeys(KEY)).join() === "subagents/a,subagents/b", "sorted, this session's only");
      await store.append(KEY, [{ type: "x" }]);
      assert((await store.listSubkeys(KEY)).join() === "subagents/a,subagents/b", "the main transcript is no subkey");
      assert((await store.listSubkeys({ projectKey: "proj", sessionId: "never" })).length === 0, "a session never seen");
    });

    await test(`a retried batch is written once; listSessionSummaries folds the SDK's summary [${where}]`, async () => {
      const store = await fresh();
      const batch = [{ type: "user", uuid: "u1", timestamp: "2026-12-01T00:00:00.000Z", message: { role: "user", content: "first prompt" } }];
      await store.append(KEY, batch);
      await store.append(KEY, batch);
      assert((await store.load(KEY)).length === 1, "the retry wrote the batch twice");
      const [summary] = await store.listSessionSummaries("proj");
      const [listed] = await store.listSessions("proj");
      assert(summary.sessionId === "sess" && summary.mtime === listed.mtime && typeof summary.data === "object", JSON.stringify(summary));
    });
  }

  await test("the README's example of what Mneme adds runs as written", async () => {
    const folder = join(scratch, "readme");
    mkdirSync(join(folder, "node_modules/@mneme"), { recursive: true });
    symlinkSync(join(HERE, ".."), join(folder, "node_modules/@mneme/node"));
    const section = readFileSync(join(HERE, "../README.md"), "utf8").split(/^## Claude Agent SDK$/m)[1].split(/^## /m)[0];
    const block = section.split("\n```js\n")[2].split("\n```\n")[0];
    writeFileSync(join(folder, "adds.mjs"), block);
    const { stdout, status, stderr } = spawnSync(process.execPath, ["adds.mjs"], { cwd: folder, encoding: "utf8" });
    assert(status === 0, stderr);
    assert(stdout.includes("staging on Fridays") && stdout.includes("\nfalse\n") && stdout.includes("output: 40"), stdout);
  });

  await test("MnemeSessionStore is the SDK's SessionStore to the type checker (strict)", async () => {
    const source = join(HERE, "session-store.check.ts");
    // The SDK's own declarations are not this test's to check.
    const found = problems([source], { ...OPTIONS, skipLibCheck: true });
    assert(found.length === 0, found.join("\n"));
  });

  // On PostgreSQL the resume runs on another store over the same database: another host.
  const ends = [
    ["folder", () => Mneme.open({ root: join(scratch, "e2e-store") }), (first) => first],
    ["PostgreSQL", () => Mneme.open({ storage: new PgStorage(cluster.url, { schema: "e2e" }) }), () => Mneme.open({ storage: new PgStorage(cluster.url, { schema: "e2e" }) })],
  ];
  for (const [where, openFirst, openSecond] of ends) {
    await test(`end to end: query() mirrors into Mneme, and a resume from an empty config folder gets the earlier turns from it [${where}]`, async () => {
      const api = await startMockApi();
      const e2e = join(scratch, `e2e-${where}`);
      try {
        const mneme = await openFirst();
        const work = join(e2e, "work");
        mkdirSync(work, { recursive: true });
        const options = (config, more = {}) => {
          mkdirSync(config, { recursive: true });
          const env = {
            ...process.env,
            ANTHROPIC_BASE_URL: api.url,
            ANTHROPIC_API_KEY: "dummy",
            CLAUDE_CONFIG_DIR: config,
            HOME: join(e2e, "home"),
            DISABLE_TELEMETRY: "1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
            DISABLE_AUTOUPDATER: "1",
          };
          return { cwd: work, env, model: "claude-sonnet-4-5", maxTurns: 1, ...more };
        };
        const run = async (prompt, opts) => {
          let session = null;
          let result = null;
          const mirrorErrors = [];
          for await (const message of query({ prompt, options: opts })) {
            if (message.type === "system" && message.subtype === "init") session = message.session_id;
            if (message.type === "system" && message.subtype === "mirror_error") mirrorErrors.push(message.error);
            if (message.type === "result") result = message;
          }
          assert(mirrorErrors.length === 0, `the SDK could not mirror into Mneme: ${mirrorErrors.join("; ")}`);
          assert(result && !result.is_error && result.result === REPLY, JSON.stringify(result));
          return session;
        };
        const first = "Releases go to staging on Fridays.";
        const session = await run(first, options(join(e2e, "config-1"), { sessionStore: new MnemeSessionStore(mneme) }));
        assert(session, "the SDK named no session");
        const context = await mneme.context(session);
        assert(context.messages[0].text === first, "Mneme does not read the mirror as the session");
        api.requests.length = 0;
        const other = await openSecond(mneme);
        const sessionStore = new MnemeSessionStore(other);
        await run("When do releases go out?", options(join(e2e, "config-2"), { resume: session, sessionStore }));
        const resumed = api.requests.find((r) => JSON.stringify(r.messages).includes("When do releases go out?"));
        assert(resumed && JSON.stringify(resumed.messages).includes(first), "the resumed request does not hold the first turn");
        const project = (await mneme.list()).sessions.find((s) => s.id === session).project;
        const lines = await sessionStore.load({ projectKey: project, sessionId: session });
        assert(lines.some((e) => JSON.stringify(e).includes("When do releases go out?")), "the resumed turn was not mirrored");
        if (other !== mneme) await other.close();
        await mneme.close();
      } finally {
        api.close();
      }
    });
  }
} finally {
  cluster.close();
  finish("SessionStore");
}
