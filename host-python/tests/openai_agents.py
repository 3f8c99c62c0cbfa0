"""MnemeSession against the real OpenAI Agents SDK (PyPI ``openai-agents``): the
SDK's own session tests from its sdist, run against Mneme's class; end to end,
``Runner.run`` twice with one session against a local mock Responses API (the second
request carries the first run's items, its tool call and output included), then
Mneme's view of that session and a compaction the SDK's next run starts from; two
hosts of one PostgreSQL store taking turns; and a writer killed mid-stream leaving
only whole batches.

Run by ``cargo xtask test``:  target/python/bin/python host-python/tests/openai_agents.py
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
sys.path.insert(0, PACKAGE)
sys.path.insert(0, HERE)

from agents import Agent, Runner, function_tool, set_default_openai_api, set_default_openai_client, set_tracing_disabled  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from harness import MockApi, PostgresCluster, finish, readme_block, test  # noqa: E402
from mneme import Mneme, MnemeError  # noqa: E402
from mneme.openai_agents import MnemeSession  # noqa: E402
from mneme.postgres import PgStorage  # noqa: E402

ROOT = os.path.dirname(PACKAGE)
# The SDK's sdist, which `cargo xtask setup` fetches and unpacks: its tests are not in
# the wheel, and newer than its GitHub snapshot.
SDIST = os.path.join(ROOT, "target", "openai-agents-sdist")


def responses_api():
    """OpenAI's Responses API: each request gets the next scripted output in
    ``api.outputs`` (a list of output items)."""

    def answer(body, n):
        output = api.outputs.pop(0) if api.outputs else [text_output("fallback")]
        usage = {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
        response = {
            "id": f"resp_{n}", "object": "response", "created_at": 1771200000, "status": "completed", "model": body.get("model", "gpt-mock"),
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": usage,
        }
        return "application/json", json.dumps(response).encode()

    api = MockApi("/v1/responses", answer)
    api.outputs = []
    return api


def text_output(text, n=1):
    return {"type": "message", "id": f"msg_{n}", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def call_output(name, arguments, call_id):
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name, "arguments": json.dumps(arguments), "status": "completed"}


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}, 21°C"


@contextlib.contextmanager
def offline_sdk():
    """The SDK's default client pointed at a mock Responses API, for the block."""
    api = responses_api()
    set_default_openai_client(AsyncOpenAI(base_url=api.url + "/v1", api_key="x"), use_for_tracing=False)
    set_default_openai_api("responses")
    set_tracing_disabled(True)
    try:
        yield api
    finally:
        api.close()


@test("the SDK's own session tests pass against MnemeSession (SQLite's internals deselected, by name)")
def _(scratch):
    if not os.path.isdir(os.path.join(SDIST, "tests", "memory")):
        raise RuntimeError(f"{SDIST} is missing: run `cargo xtask setup`, which unpacks the openai-agents sdist there")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([PACKAGE, HERE]), "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "openai_agents_plugin", "-p", "no:cacheprovider", "-s",
         "tests/memory/test_session.py", "tests/memory/test_session_limit.py"],
        cwd=SDIST, env=env, capture_output=True, text=True, timeout=600,
    )
    tail = ran.stdout[-3000:] + ran.stderr[-2000:]
    assert ran.returncode == 0, tail
    passed = int(re.search(r"(\d+) passed", ran.stdout).group(1))
    deselected = int(re.search(r"(\d+) deselected", ran.stdout).group(1))
    assert passed >= 50 and deselected == 18, tail  # 16 tests, one parametrised three ways
    print(f"     {passed} of the SDK's tests passed, {deselected} deselected")


@test("end to end: Runner.run twice with one MnemeSession; the second request carries the first run's items")
async def _(scratch):
    with offline_sdk() as api:
        store = Mneme(os.path.join(scratch, "store"))
        agent = Agent(name="Assistant", instructions="Be brief.", model="gpt-mock", tools=[weather])
        api.outputs = [[call_output("weather", {"city": "Paris"}, "call_1")], [text_output("It is sunny in Paris.")]]
        first = await Runner.run(agent, "Weather in Paris?", session=MnemeSession("chat-1", store, cwd="/work/app"))
        assert first.final_output == "It is sunny in Paris."
        api.outputs = [[text_output("You asked about Paris.", 2)]]
        # A new session object on a new store over the same folder: only the folder holds the history.
        again = MnemeSession("chat-1", Mneme(os.path.join(scratch, "store")), cwd="/work/app")
        second = await Runner.run(agent, "What did I ask?", session=again)
        assert second.final_output == "You asked about Paris."
        sent = api.requests[-1]["input"]
        kinds = [item.get("type", item.get("role")) for item in sent]
        assert kinds[:4] == ["user", "function_call", "function_call_output", "message"] or kinds[:4] == ["message", "function_call", "function_call_output", "message"], kinds
        assert sent[0]["content"] == "Weather in Paris?" and sent[1]["call_id"] == "call_1" and "sunny in Paris" in json.dumps(sent[2])
        assert sent[-1]["content"] == "What did I ask?"
        items = await again.get_items()
        assert len(items) == 6 and items[-1]["content"][0]["text"] == "You asked about Paris.", items

        # The same session, as Mneme reads it.
        context = store.context("chat-1")
        assert [m["role"] for m in context["messages"]] == ["user", "assistant", "user", "assistant", "user", "assistant"]
        assert store.search("sunny Paris")[0]["id"] == "chat-1"
        assert store.provider_context("chat-1")["interrupted"] == []
        assert os.path.exists(os.path.join(scratch, "store", "projects", "-work-app", "chat-1.jsonl"))


@test("on PostgreSQL: a run on one host, the next on another host of the same store")
async def _(scratch):
    cluster = PostgresCluster()
    try:
        with offline_sdk() as api:
            agent = Agent(name="Assistant", model="gpt-mock")
            api.outputs = [[text_output("Noted: Fridays.")]]
            with Mneme(storage=PgStorage(cluster.url)) as first_host:
                await Runner.run(agent, "Releases go out on Fridays.", session=MnemeSession("shared", first_host, cwd="/work/app"))
            api.outputs = [[text_output("On Fridays.", 2)]]
            with Mneme(storage=PgStorage(cluster.url)) as second_host:
                await Runner.run(agent, "When do releases go out?", session=MnemeSession("shared", second_host, cwd="/work/app"))
                sent = json.dumps(api.requests[-1]["input"])
                assert "Releases go out on Fridays." in sent and "Noted: Fridays." in sent, sent
                assert len(await MnemeSession("shared", second_host).get_items()) == 4
                assert second_host.search("fridays")[0]["id"] == "shared"
    finally:
        cluster.close()


@test("after Mneme compacts the session, the SDK's next run starts from the summary")
async def _(scratch):
    with offline_sdk() as api:
        store = Mneme(os.path.join(scratch, "store"))
        session = MnemeSession("long", store, cwd="/work/app")
        agent = Agent(name="Assistant", model="gpt-mock")
        for n in range(6):
            api.outputs = [[text_output(f"answer {n}", n)]]
            await Runner.run(agent, f"question {n} " + "words " * 300, session=session)
        compacted = store.compact("long", settings={"context_window": 4000, "keep": {"recent_tokens": 400}}, mode="manual")
        assert compacted, compacted
        api.outputs = [[text_output("fresh")]]
        await Runner.run(agent, "next", session=session)
        sent = api.requests[-1]["input"]
        assert sent[0]["role"] == "user" and "question 0" in sent[0]["content"] and len(sent) < 13, [str(i)[:80] for i in sent]
        assert sent[-1]["content"] == "next"


WRITER = """
import os, sys
sys.path.insert(0, {package!r})
import asyncio
from mneme import Mneme
from mneme.openai_agents import MnemeSession
async def main():
    session = MnemeSession("killed", Mneme({folder!r}), cwd="/work/app")
    n = 0
    while True:
        await session.add_items([
            {{"type": "function_call", "call_id": f"c{{n}}", "name": "f", "arguments": "{{}}"}},
            {{"type": "function_call_output", "call_id": f"c{{n}}", "output": "x" * 4000}},
        ])
        n += 1
        if n == 20:
            print("started", flush=True)
asyncio.run(main())
"""


@test("a writer killed mid-stream leaves whole batches: no call without the output added with it")
async def _(scratch):
    folder = os.path.join(scratch, "store")
    writer = subprocess.Popen([sys.executable, "-c", WRITER.format(package=PACKAGE, folder=folder)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "started"
    time.sleep(0.3)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    items = await MnemeSession("killed", Mneme(folder)).get_items()
    assert len(items) >= 40 and len(items) % 2 == 0, len(items)
    for n in range(0, len(items), 2):
        assert items[n]["call_id"] == items[n + 1]["call_id"] == f"c{n // 2}", items[n : n + 2]
        assert items[n]["type"] == "function_call" and items[n + 1]["type"] == "function_call_output"


@test("pop_item, clear_session and close behave as the Session protocol says")
async def _(scratch):
    store = Mneme(scratch)
    session = MnemeSession("s", store, cwd="/work/app", session_settings={"limit": 2})
    assert await session.get_items() == [] and await session.pop_item() is None
    await session.add_items([{"role": "user", "content": str(n)} for n in range(4)])
    assert [i["content"] for i in await session.get_items()] == ["2", "3"], "the settings' limit"
    assert [i["content"] for i in await session.get_items(limit=3)] == ["1", "2", "3"]
    assert (await session.pop_item())["content"] == "3"
    [transcript] = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(scratch, "projects")) for f in files if f == "s.jsonl"]
    with open(transcript, encoding="utf-8") as file:
        assert sum(1 for line in file if '"content":"3"' in line) == 1, "tombstoned, not erased: the line stays in the file"
    await session.clear_session()
    assert await session.get_items() == []
    await session.clear_session()
    session.close()
    try:
        await session.get_items()
        raise AssertionError("a closed session answered")
    except RuntimeError as error:
        assert "closed" in str(error)
    assert store.items("s") == [], "the store stays open"


@test("an item is stored compact with its text as written; what is no batch is refused, never taken apart")
async def _(scratch):
    store = Mneme(scratch)
    session = MnemeSession("s", store, cwd="/work/app")
    item = {"role": "user", "content": "café 🚀 " + "é" * 1000}
    await session.add_items([item])
    [transcript] = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(scratch, "projects")) for f in files if f == "s.jsonl"]
    with open(transcript, encoding="utf-8") as file:
        line = file.read()
    # Escaped with spaces, as json.dumps writes by default, an 'é' took six bytes and more.
    assert '"responsesItem":{"role":"user","content":"café 🚀 éé' in line, line[:300]
    assert len(line.encode()) < 2 * len(json.dumps(item, ensure_ascii=False).encode()) + 600, len(line)
    for batch, words in [({"role": "user", "content": "x"}, "items must be a list of item dicts, not dict"), ("hi", "not str")]:
        try:
            await session.add_items(batch)
        except Exception as error:  # noqa: BLE001 - the store's error is what a caller gets
            assert getattr(error, "kind", None) == "invalid-argument" and words in str(error), error
        else:
            raise AssertionError(f"{batch!r} was taken as a batch")
    assert await session.get_items() == [item]


@test("any string the SDK names a session by keeps one session: user:42 and user/42 two, each under its Mneme id")
async def _(scratch):
    store = Mneme(scratch)
    colon, slash = MnemeSession("user:42", store, cwd="/work/app"), MnemeSession("user/42", store, cwd="/work/app")
    assert colon.session_id == "user:42", "the SDK's id stays the SDK's"
    assert colon.mneme_id.startswith("user-42_") and colon.mneme_id != slash.mneme_id, (colon.mneme_id, slash.mneme_id)
    assert MnemeSession("chat-1", store).mneme_id == "chat-1", "an id of Mneme's is its own"
    await colon.add_items([{"role": "user", "content": "colon"}])
    await slash.add_items([{"role": "user", "content": "slash"}])
    again = MnemeSession("user:42", Mneme(scratch), cwd="/elsewhere")
    assert await again.get_items() == [{"role": "user", "content": "colon"}]
    assert store.context(colon.mneme_id)["messages"][0]["content"][0]["text"] == "colon"
    assert await again.pop_item() == {"role": "user", "content": "colon"}
    await slash.clear_session()
    assert await slash.get_items() == [] and await colon.get_items() == []
    assert [s["id"] for s in store.list()["sessions"]] == [colon.mneme_id]
    # The mapping reads no store: the class gives it, and a session is made over a
    # closed store (its first call is what is refused).
    assert Mneme.session_id_of("user:42") == colon.mneme_id == store.session_id_of("user:42")
    store.close()
    late = MnemeSession("user:42", store)
    assert late.mneme_id == colon.mneme_id
    try:
        await late.get_items()
        raise AssertionError("a closed store answered")
    except MnemeError as error:
        assert error.kind == "invalid-argument" and "closed" in str(error), error


@test("the README's example of what Mneme adds runs as written")
def _(scratch):
    api = responses_api()
    try:
        api.outputs = [[text_output("Hello!")]]
        code = readme_block("OpenAI Agents SDK", 0).replace("MOCK_URL", api.url + "/v1")
        os.chdir(scratch)
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(ROOT)
        api.close()


finish("OpenAI Agents SDK")
