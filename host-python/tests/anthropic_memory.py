"""Claude's memory tool in the Python package against the real Anthropic SDK (PyPI
``anthropic``): the README's tool-runner block run as written against a mock of the
Messages API (the model writes a memory, then names a path the tool refuses), the
answers the SDK sends back in its next requests, the memory the store keeps; the async
runner with ``MnemeAsyncMemoryTool``; the README's own-loop function; and a store
failure that is not the model's.

Run by ``cargo xtask test``:  target/python/bin/python host-python/tests/anthropic_memory.py
"""

import asyncio
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
sys.path.insert(0, PACKAGE)
sys.path.insert(0, HERE)

from anthropic import AsyncAnthropic  # noqa: E402

from harness import MockApi, finish, readme_block, test  # noqa: E402
from mneme import Mneme, MnemeError  # noqa: E402
from mneme.anthropic import MnemeAsyncMemoryTool  # noqa: E402

PROJECT = Mneme.project_of("/home/me/app")


def messages_api(calls):
    """The Messages API: request n gets a tool_use of the memory tool with input
    ``calls[n - 1]``, and after the last call an answer in words."""

    def answer(body, n):
        if n <= len(calls):
            content = [{"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": calls[n - 1]}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "Noted."}], "end_turn"
        message = {
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": body["model"], "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return "application/json", json.dumps(message).encode()

    return MockApi("/v1/messages", answer)


def result_of(request, tool_use_id):
    """The tool_result block for ``tool_use_id`` in a request the SDK sent."""
    blocks = [b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]]
    return next(b for b in blocks if b.get("type") == "tool_result" and b["tool_use_id"] == tool_use_id)


def text_of(result):
    content = result["content"]
    return content if isinstance(content, str) else "".join(block["text"] for block in content)


CALLS = [
    {"command": "create", "path": "/memories/deploys.md", "file_text": "Deploys happen on Tuesdays.\n"},
    {"command": "view", "path": "/etc/passwd"},
]


@test("the README's tool runner writes the model's memory into the store; a refusal goes back marked is_error")
def tool_runner(scratch):
    api = messages_api(CALLS)
    cwd, env = os.getcwd(), dict(os.environ)
    try:
        os.chdir(scratch)
        # The block makes its client as a user would: from the environment.
        os.environ.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="dummy")
        exec(compile(readme_block("Claude's memory tool", 0), "README.md", "exec"), {})
        assert len(api.requests) == 3, len(api.requests)
        created = result_of(api.requests[1], "toolu_1")
        assert text_of(created) == "File created successfully at: /memories/deploys.md" and not created.get("is_error"), created
        refused = result_of(api.requests[2], "toolu_2")
        assert refused.get("is_error") is True and text_of(refused) == "Path must start with /memories, got: /etc/passwd", refused
        assert api.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}], api.requests[0]["tools"]
        with Mneme("./data") as store:
            [memory] = store.memory_list(PROJECT)
            assert (memory["file"], memory["description"]) == ("deploys", "Deploys happen on Tuesdays."), memory
            assert store.memory_recall(PROJECT, "when do we deploy")["hits"][0]["file"] == "deploys"
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        api.close()


@test("MnemeAsyncMemoryTool under AsyncAnthropic's tool runner: the same answers, the same memory")
def async_runner(scratch):
    api = messages_api(CALLS)
    try:
        with Mneme(scratch) as store:

            async def run():
                client = AsyncAnthropic(base_url=api.url, api_key="dummy")
                runner = client.beta.messages.tool_runner(
                    model="claude-sonnet-4-5", max_tokens=256, messages=[{"role": "user", "content": "Remember deploy day."}],
                    tools=[MnemeAsyncMemoryTool(store, PROJECT)],
                )
                async for _ in runner:
                    pass

            asyncio.run(run())
            assert text_of(result_of(api.requests[1], "toolu_1")) == "File created successfully at: /memories/deploys.md"
            assert result_of(api.requests[2], "toolu_2").get("is_error") is True
            assert [m["file"] for m in store.memory_list(PROJECT)] == ["deploys"]
            assert MnemeAsyncMemoryTool(store, PROJECT).to_dict() == {"type": "memory_20250818", "name": "memory"}
            assert asyncio.run(MnemeAsyncMemoryTool(store, PROJECT).clear_all_memory()).startswith("Archived 1 memories")
            assert store.memory_list(PROJECT) == [] and len(store.memory_list(PROJECT, {"all": True})) == 1
    finally:
        api.close()


@test("the README's own-loop function gives a tool_result block, is_error on a refusal")
def own_loop(scratch):
    scope = {}
    exec(compile(readme_block("Claude's memory tool", 1), "README.md", "exec"), scope)
    with Mneme(scratch) as store:
        block = {"type": "tool_use", "id": "toolu_9", "name": "memory", "input": {"command": "create", "path": "/memories/a.md", "file_text": "A.\n"}}
        assert scope["memory_tool_result"](store, PROJECT, block) == {
            "type": "tool_result", "tool_use_id": "toolu_9", "content": "File created successfully at: /memories/a.md", "is_error": False,
        }
        again = scope["memory_tool_result"](store, PROJECT, block)
        assert (again["is_error"], again["content"]) == (True, "File /memories/a.md already exists"), again


@test("a project that is no name is the caller's error, not an answer for the model")
def callers_error(scratch):
    with Mneme(scratch) as store:
        try:
            store.memory_tool("../elsewhere", {"command": "view", "path": "/memories"})
            raise AssertionError("an invalid project was answered")
        except MnemeError as error:
            assert error.kind == "invalid-project", error.kind


finish("Anthropic SDK memory tool")
