"""MnemeSessionStore against the real Claude Agent SDK (PyPI ``claude-agent-sdk``):
the SDK's own conformance suite, what Mneme adds (a retried batch written once,
redaction, a torn last line, a mirror Mneme reads as a session), and end to end —
the SDK's ``query()`` with Mneme as its session store, the bundled Claude Code against
a local mock Messages API, then a resume from an empty config folder, so only the
store can supply the transcript; both on a folder and on a PostgreSQL server (a
throwaway cluster), where the resume runs through a second store as another host's
would.

Run by ``cargo xtask test``:  target/python/bin/python host-python/tests/session_store.py
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, SystemMessage, query  # noqa: E402
from claude_agent_sdk.testing import run_session_store_conformance  # noqa: E402

from harness import MockApi, PostgresCluster, finish, readme_block, test  # noqa: E402
from mneme import Mneme  # noqa: E402
from mneme.claude_agent_sdk import MnemeSessionStore  # noqa: E402
from mneme.postgres import PgStorage  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "tests", "corpus")
REPLY = "mock reply"


def messages_api():
    """Anthropic's Messages API: every request answered with one text reply (streamed
    when asked)."""

    def answer(body, n):
        message = {"id": f"msg_mock_{n}", "type": "message", "role": "assistant", "model": body.get("model"), "stop_sequence": None}
        usage = {"input_tokens": 10, "output_tokens": 2}
        if not body.get("stream"):
            return "application/json", json.dumps({**message, "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn", "usage": usage}).encode()
        events = [
            ("message_start", {"message": {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}}),
            ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": REPLY}}),
            ("content_block_stop", {"index": 0}),
            ("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}}),
            ("message_stop", {}),
        ]
        return "text/event-stream", "".join(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n" for kind, data in events).encode()

    return MockApi("/v1/messages", answer)


@test("the README's example of what Mneme adds runs as written")
async def _(scratch):
    script = os.path.join(scratch, "adds.py")
    with open(script, "w", encoding="utf-8") as file:
        file.write(readme_block("Claude Agent SDK", 1))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.path.dirname(HERE)
    done = subprocess.run([sys.executable, script], cwd=scratch, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "staging on Fridays" in lines[0] and lines[1] == "False", done.stdout
    assert "'output': 40" in lines[2], done.stdout


@test("the SDK's own conformance suite passes, every optional method included")
async def _(scratch):
    made = []

    def make_store():
        folder = os.path.join(scratch, f"store-{len(made)}")
        made.append(Mneme(folder))
        return MnemeSessionStore(made[-1])

    try:
        await run_session_store_conformance(make_store)
    finally:
        for store in made:
            store.close()
    # Every contract ran: the suite skips an optional one only for a store without it.
    assert len(made) >= 15, f"the suite made {len(made)} stores: some contracts did not run"


@test("a retried batch is written once, an empty one writes nothing, and a batch is one write")
async def _(scratch):
    with Mneme(scratch) as mneme:
        store = MnemeSessionStore(mneme)
        key = {"project_key": "-home-me-app", "session_id": "5c0b5c4e-0000-4000-8000-000000000001"}
        await store.append(key, [])
        assert await store.load(key) is None, "an empty batch left a transcript"
        batch = [{"type": "user", "uuid": f"u{n}", "n": n} for n in range(3)] + [{"type": "custom-title", "customTitle": "t"}]
        await store.append(key, batch)
        # The SDK retries a batch whose append raised after landing, and may retry one
        # that overlaps it.
        await store.append(key, batch[1:3] + [{"type": "user", "uuid": "u3", "n": 3}])
        loaded = await store.load(key)
        assert [e.get("uuid") for e in loaded] == ["u0", "u1", "u2", None, "u3"], loaded
        try:
            await store.append(key, [{"type": "user", "uuid": "u4"}, "not an object"])
        except Exception as error:  # noqa: BLE001 - the store's error is what a caller gets
            assert "line 2 of 2" in str(error), error
        else:
            raise AssertionError("a line that is no object was accepted")
        assert len(await store.load(key)) == 5, "a refused batch wrote some of its lines"
        # Claude Code writes `\\ud83d` when it cuts an emoji in two; json.loads makes it a
        # lone surrogate, which must still mirror.
        cut = json.loads('{"type":"user","uuid":"u5","message":{"role":"user","content":"half \\ud83d"}}')
        await store.append(key, [cut])
        assert (await store.load(key))[-1] == cut


@test("what is not a SessionKey or a list of entries is refused in the SDK's names")
async def _(scratch):
    with Mneme(scratch) as mneme:
        store = MnemeSessionStore(mneme)
        key = {"project_key": "-home-me-app", "session_id": "5c0b5c4e-0000-4000-8000-000000000001"}
        for call, words in [
            (store.append(key, {"type": "user", "uuid": "u0"}), "entries must be a list of transcript entries (dicts), not dict"),
            (store.append({"projectKey": "-home-me-app", "sessionId": "s"}, []), "the key must be a SessionKey, a dict of project_key, session_id"),
            (store.load(["-home-me-app"]), "the key must be a SessionKey"),
            (store.list_subkeys({"project_key": "-home-me-app"}), "the key must be a SessionKey"),
        ]:
            try:
                await call
            except Exception as error:  # noqa: BLE001 - the store's error is what a caller gets
                assert getattr(error, "kind", None) == "invalid-argument" and words in str(error), error
            else:
                raise AssertionError(f"refused nothing: {words}")
        assert await store.load(key) is None, "nothing was written"


@test("a mirrored line's secrets are redacted by default; set_redaction([]) mirrors exactly")
async def _(scratch):
    secret = "sk-ant-api03-" + "x" * 90 + "AA"
    entry = {"type": "user", "uuid": "s1", "message": {"role": "user", "content": f"my key is {secret}"}}
    with Mneme(os.path.join(scratch, "redacted")) as mneme:
        store = MnemeSessionStore(mneme)
        key = {"project_key": "p", "session_id": "s"}
        await store.append(key, [entry])
        [loaded] = await store.load(key)
        assert secret not in json.dumps(loaded) and loaded["uuid"] == "s1", loaded
    with Mneme(os.path.join(scratch, "exact")) as mneme:
        mneme.set_redaction([])
        store = MnemeSessionStore(mneme)
        await store.append(key, [entry])
        assert await store.load(key) == [entry]


@test("a torn last line is left out of a load, and the next batch lands whole after it")
async def _(scratch):
    with Mneme(scratch) as mneme:
        store = MnemeSessionStore(mneme)
        key = {"project_key": "p", "session_id": "s"}
        await store.append(key, [{"type": "user", "uuid": "a"}])
        with open(os.path.join(scratch, "projects/p/s.jsonl"), "a") as file:
            file.write('{"type":"user","uuid":"cut')
    with Mneme(scratch) as mneme:
        store = MnemeSessionStore(mneme)
        await store.append(key, [{"type": "user", "uuid": "b"}])
        assert [e["uuid"] for e in await store.load(key)] == ["a", "b"]


@test("a mirrored Claude Code transcript is a Mneme session: context, search and usage read it")
async def _(scratch):
    corpus = os.path.join(CORPUS, "claude", "04-v2.1.42-progress")
    transcript = next(os.path.join(dirpath, f) for dirpath, _, files in sorted(os.walk(corpus)) for f in sorted(files) if f.endswith(".jsonl") and "subagents" not in dirpath)
    with open(transcript, encoding="utf-8") as file:
        entries = [json.loads(line) for line in file if line.strip()]
    session = os.path.basename(transcript)[: -len(".jsonl")]
    with Mneme(scratch) as mneme:
        store = MnemeSessionStore(mneme)
        key = {"project_key": "-home-me-app", "session_id": session}
        for start in range(0, len(entries), 10):
            await store.append(key, entries[start : start + 10])
        assert [s["session_id"] for s in await store.list_sessions("-home-me-app")] == [session]
        loaded = await store.load(key)
        assert len(loaded) == len(entries), (len(loaded), len(entries))
        context = mneme.context(session)
        assert context["messages"], "Mneme read no message of the mirrored session"
        word = next(w for m in context["messages"] for w in m["text"].split() if len(w) > 6 and w.isalpha())
        assert any(hit["id"] == session for hit in mneme.search(word)), f"search for {word!r} did not find the mirrored session"
        assert mneme.usage(session)["replies"] > 0, "usage counts no reply of the mirrored session"


async def end_to_end(scratch, open_store):
    """query() with a MnemeSessionStore on the store ``open_store()`` opens, then a resume
    from an empty config folder through a second store ``open_store()`` opens (another
    host of the deployment): only the store can supply the transcript."""
    api = messages_api()
    try:
        with open_store() as first_host, open_store() as second_host:
            work = os.path.join(scratch, "work")
            os.makedirs(work)

            def options(store, config, **more):
                os.makedirs(config, exist_ok=True)
                env = {
                    "ANTHROPIC_BASE_URL": api.url,
                    "ANTHROPIC_API_KEY": "dummy",
                    "CLAUDE_CONFIG_DIR": config,
                    "HOME": os.path.join(scratch, "home"),
                    "DISABLE_TELEMETRY": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "DISABLE_AUTOUPDATER": "1",
                }
                return ClaudeAgentOptions(session_store=MnemeSessionStore(store), cwd=work, env=env, model="claude-sonnet-4-5", max_turns=1, **more)

            async def run(prompt, opts):
                session, errors, result = None, [], None
                async for message in query(prompt=prompt, options=opts):
                    if isinstance(message, SystemMessage) and message.subtype == "init":
                        session = message.data.get("session_id")
                    elif isinstance(message, SystemMessage) and message.subtype == "mirror_error":
                        errors.append(message.data)
                    elif isinstance(message, ResultMessage):
                        result = message
                assert not errors, f"the SDK could not mirror into Mneme: {errors}"
                assert result is not None and not result.is_error and result.result == REPLY, result
                return session

            first = "Releases go to staging on Fridays."
            session = await run(first, options(first_host, os.path.join(scratch, "config-1")))
            assert session, "the SDK named no session"
            project = next(s["project"] for s in first_host.list()["sessions"] if s["id"] == session)
            mirrored = await MnemeSessionStore(first_host).load({"project_key": project, "session_id": session})
            assert mirrored and any(first in json.dumps(e) for e in mirrored), f"the store holds no line with the prompt: {mirrored}"
            assert first_host.context(session)["messages"][0]["text"] == first, "Mneme does not read the mirror as the session"

            api.requests.clear()
            await run("When do releases go out?", options(second_host, os.path.join(scratch, "config-2"), resume=session))
            resumed = next(r for r in api.requests if "When do releases go out?" in json.dumps(r["messages"]))
            assert first in json.dumps(resumed["messages"]), f"the resumed request does not hold the first turn: {resumed['messages']}"
            lines = await MnemeSessionStore(first_host).load({"project_key": project, "session_id": session})
            assert any("When do releases go out?" in json.dumps(e) for e in lines), "the resumed turn was not mirrored"
    finally:
        api.close()


@test("end to end on a folder: query() mirrors into Mneme, and a resume from an empty config folder gets the earlier turns from it")
async def _(scratch):
    await end_to_end(scratch, lambda: Mneme(os.path.join(scratch, "store")))


@test("end to end on PostgreSQL: a second host resumes from an empty config folder what the first mirrored")
async def _(scratch):
    cluster = PostgresCluster()
    try:
        await end_to_end(scratch, lambda: Mneme(storage=PgStorage(cluster.url)))
    finally:
        cluster.close()


@test("the SDK's conformance suite passes on PostgreSQL too")
async def _(scratch):
    cluster = PostgresCluster()
    made = []

    def make_store():
        made.append(Mneme(storage=PgStorage(cluster.url, schema=f"conformance_{len(made)}")))
        return MnemeSessionStore(made[-1])

    try:
        await run_session_store_conformance(make_store)
        assert len(made) >= 15, f"the suite made {len(made)} stores: some contracts did not run"
    finally:
        for store in made:
            store.close()
        cluster.close()


finish("Claude Agent SDK")
