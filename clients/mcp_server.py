"""`mneme mcp` driven by the official MCP client (PyPI `mcp`, pinned by `cargo xtask
setup`): the tools and the resource a client lists, each tool called on a store the
`mneme` CLI wrote, and each refusal — over stdio and over streamable HTTP on a folder,
and over stdio on a PostgreSQL server. Run by `cargo xtask test` after the Rust tests
have built target/release/mneme."""

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "host-python" / "tests"))
from harness import PostgresCluster  # noqa: E402

MNEME = os.environ.get("MNEME", str(HERE.parent / "target/release/mneme"))
PROJECT = "-work-app"
# rmcp answers a client's DELETE of its session with 202 Accepted, which the Python
# client logs as a failed termination (it expects 200 or 204); the session is closed.
logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)
failures = 0


def mneme(store, *args):
    return subprocess.run([MNEME, *store, *args], check=True, capture_output=True, text=True).stdout


async def http_server(store, env=None):
    """`mneme mcp --http 0` on `store`, the URL it says it serves at and the header it
    says every request must carry."""
    # Not the runner's own token, if it has one: each case says which it means.
    env = env or {name: value for name, value in os.environ.items() if name != "MNEME_MCP_TOKEN"}
    server = subprocess.Popen([MNEME, *store, "mcp", "--project", PROJECT, "--http", "0"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    said = ""
    for _ in range(3):
        said += await asyncio.wait_for(asyncio.to_thread(server.stderr.readline), 30)
    url = re.search(r"http://127\.0\.0\.1:\d+/mcp", said)
    header = re.search(r"`Authorization: (Bearer \S+)`", said)
    if not url or not header:
        server.kill()
        raise AssertionError(f"mneme mcp --http did not say where it serves and with which token: {said!r}")
    return server, url.group(0), {"Authorization": header.group(1)}


def stop(server):
    """Stops an HTTP server as Ctrl-C does; its exit status."""
    server.send_signal(signal.SIGINT)
    try:
        return server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        raise


@contextlib.asynccontextmanager
async def connect(store, transport):
    """The client's streams to a server on `store` over `transport`."""
    if transport == "stdio":
        params = StdioServerParameters(command=MNEME, args=[*store, "mcp", "--project", PROJECT])
        async with stdio_client(params) as (read, write):
            yield read, write
        return
    server, url, headers = await http_server(store)
    try:
        async with create_mcp_http_client(headers=headers) as http, streamable_http_client(url, http_client=http) as (read, write):
            yield read, write
    finally:
        stop(server)


def seed(store):
    """Two sessions, three memories of the project and one global, written by the CLI as a user would."""
    mneme(store, "append", "s-db", "--cwd", "/work/app", "--role", "user", "--text", "Which database should the billing service use?")
    mneme(store, "append", "s-db", "--cwd", "/work/app", "--role", "assistant", "--text", "PostgreSQL: the ledger needs transactions.")
    mneme(store, "append", "s-ui", "--cwd", "/work/other", "--role", "user", "--text", "Make the buttons blue.")
    for name, kind, description, body in [
        ("db choice", "project", "Billing runs on PostgreSQL", "We chose PostgreSQL for the billing ledger."),
        ("editor", "user", "The user edits in Helix", "Prefers Helix with its default keys."),
        ("deploys", "reference", "Deploys go through the release train", "Every Thursday."),
    ]:
        mneme(store, "memory", "--project", PROJECT, "add", "--name", name, "--type", kind, "--description", description, "--body", body)
    mneme(store, "memory", "--global", "add", "--name", "tabs", "--type", "user", "--description", "The user indents with tabs", "--body", "Tabs, always.")
    # Other projects' memories, read through the resource template: one with sessions, one without, one whose name a URI encodes.
    mneme(store, "memory", "--project", "-work-other", "add", "--name", "colors", "--type", "project", "--description", "Buttons are blue", "--body", "Blue.")
    mneme(store, "memory", "--project", "-work-lab", "add", "--name", "lab", "--type", "project", "--description", "The lab runs nightly", "--body", "Nightly.")
    mneme(store, "memory", "--project", "-work-café", "add", "--name", "menu", "--type", "project", "--description", "The café menu changes weekly", "--body", "Weekly.")


def test(name):
    def wrap(body):
        async def run(setup):
            global failures
            start = time.monotonic()
            try:
                async with connect(STORE, setup) as (read, write), ClientSession(read, write) as client:
                    await asyncio.wait_for(client.initialize(), 60)
                    await asyncio.wait_for(body(client), 60)
                print(f"ok   {name} [{SETUP}] ({round((time.monotonic() - start) * 1000)} ms)", flush=True)
            except Exception as error:  # a failed check, or the server gone
                failures += 1
                print(f"FAIL {name} [{SETUP}]", flush=True)
                for cause in leaves(error):
                    print(f"     {type(cause).__name__}: {cause}", flush=True)

        run.__name__ = name
        return run

    return wrap


def leaves(error):
    """The errors an exception group (the client's task group) holds, or the error."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def answer(result):
    """A tool's JSON answer; a refusal (isError) is an assertion failure here."""
    assert not result.is_error, f"the tool refused: {result.content[0].text}"
    return json.loads(result.content[0].text)


def refusal(result):
    assert result.is_error, f"expected a refusal, got {result.content[0].text[:200]}"
    return result.content[0].text


@test("the server lists its six tools, each with a description and a schema of its arguments, and the project's and the global MEMORY.md")
async def lists(client):
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["instructions", "list_sessions", "memory", "recall", "search_sessions", "show_session"], sorted(tools)
    assert tools["memory"].input_schema["required"] == ["command"], tools["memory"].input_schema
    for field in ["path", "view_range", "file_text", "old_str", "new_str", "insert_line", "insert_text", "old_path", "new_path"]:
        assert field in tools["memory"].input_schema["properties"], (field, tools["memory"].input_schema)
    for tool in tools.values():
        assert len(tool.description) > 40, tool
        assert tool.input_schema["type"] == "object", tool.input_schema
    assert tools["recall"].input_schema["required"] == ["query"], tools["recall"].input_schema
    assert tools["show_session"].input_schema["required"] == ["id"]
    resources = (await client.list_resources()).resources
    uris = [str(r.uri) for r in resources]
    assert uris == ["mneme://memory/MEMORY.md", "mneme://memory/global/MEMORY.md"], resources
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["mneme://memory/projects/{project}/MEMORY.md"], templates


@test("recall finds the project's memory by its words and says why")
async def recall(client):
    hits = answer(await client.call_tool("recall", {"query": "which database for billing", "limit": 2}))
    assert hits and hits[0]["file"] == "db_choice", hits
    assert hits[0]["matched"] and hits[0]["current"], hits[0]
    assert hits[0]["body"].strip() == "We chose PostgreSQL for the billing ledger.", hits[0]
    assert len(hits) <= 2, hits


@test("search_sessions finds a message across sessions, each hit with its session, project, dialect and folder")
async def search(client):
    hits = answer(await client.call_tool("search_sessions", {"query": "ledger transactions"}))
    assert hits[0]["id"] == "s-db" and hits[0]["project"] == "-work-app", hits[0]
    assert "PostgreSQL" in hits[0]["text"], hits[0]
    assert (hits[0]["format"], hits[0]["cwd"]) == ("claude", "/work/app"), hits[0]
    assert "resume" not in hits[0], "Claude Code resumes only UUID ids: no command for s-db"
    other = answer(await client.call_tool("search_sessions", {"query": "blue buttons", "project": "-work-other"}))
    assert other and all(hit["id"] == "s-ui" for hit in other), other
    elsewhere = answer(await client.call_tool("search_sessions", {"query": "blue buttons", "project": "-work-app"}))
    assert not any(hit["id"] == "s-ui" for hit in elsewhere), elsewhere


@test("list_sessions lists every session, or one project's")
async def listing(client):
    sessions = answer(await client.call_tool("list_sessions", {}))
    assert sorted(s["id"] for s in sessions) == ["s-db", "s-ui"], sessions
    one = answer(await client.call_tool("list_sessions", {"project": "-work-other", "limit": 5}))
    assert [s["id"] for s in one] == ["s-ui"], one
    # Its working directory names it too, as the CLI's --project takes one (it matched nothing).
    by_folder = answer(await client.call_tool("list_sessions", {"project": "/work/other"}))
    assert [s["id"] for s in by_folder] == ["s-ui"], by_folder


@test("show_session gives the conversation a model would resume, its last messages when asked")
async def show(client):
    shown = answer(await client.call_tool("show_session", {"id": "s-db"}))
    assert [(m["role"], m["text"]) for m in shown["messages"]] == [
        ("user", "Which database should the billing service use?"),
        ("assistant", "PostgreSQL: the ledger needs transactions."),
    ], shown["messages"]
    assert (shown["earlier_messages"], shown["compacted"]) == (0, False), shown
    last = answer(await client.call_tool("show_session", {"id": "s-db", "limit": 1}))
    assert [m["role"] for m in last["messages"]] == ["assistant"] and last["earlier_messages"] == 1, last
    # A limit of 0 gave one item; it asks for nothing, and is refused by every tool.
    for tool, arguments in [("show_session", {"id": "s-db"}), ("list_sessions", {}), ("search_sessions", {"query": "billing"}), ("recall", {"query": "billing"})]:
        said = refusal(await client.call_tool(tool, {**arguments, "limit": 0}))
        assert "limit is 0: give 1 or more" in said, (tool, said)


@test("instructions gives the CLAUDE.md files Claude Code loads for a folder, from the disk")
async def instructions(client):
    with tempfile.TemporaryDirectory() as work:
        app = Path(work) / "app"
        (app / "src").mkdir(parents=True)
        (app / "CLAUDE.md").write_text("Use tabs.\n")
        (app / "src" / "CLAUDE.md").write_text("Tests live in tests/.\n")
        loaded = answer(await client.call_tool("instructions", {"cwd": str(app / "src")}))
        assert "Use tabs." in loaded["text"] and "Tests live in tests/." in loaded["text"], loaded["text"]
        assert any(f["path"].endswith("app/CLAUDE.md") and f["loaded"] for f in loaded["files"]), loaded["files"]
        missing = await client.call_tool("instructions", {"cwd": str(app / "nowhere")})
        assert missing.is_error and "does not exist" in missing.content[0].text, missing


def text_of(result):
    assert not result.is_error, f"the tool refused: {result.content[0].text}"
    return result.content[0].text


def memory_cli(*args):
    return mneme(STORE, "memory", "--project", PROJECT, *args)


@test("the memory tool writes, reads, edits, renames and archives files under /memories, memories the CLI and recall see")
async def memory_tool(client):
    call = lambda **input: client.call_tool("memory", input)
    created = text_of(await call(command="create", path="/memories/release_train.md", file_text="Releases ship on Thursdays.\nFreeze on Wednesday noon.\n"))
    assert created == "File created successfully at: /memories/release_train.md", created
    listing = text_of(await call(command="view", path="/memories"))
    assert "\t/memories/release_train.md" in listing and "\t/memories/db_choice.md" in listing and "\t/memories/MEMORY.md" in listing, listing
    shown = text_of(await call(command="view", path="/memories/release_train.md"))
    assert shown == "Here's the content of /memories/release_train.md with line numbers:\n     1\tReleases ship on Thursdays.\n     2\tFreeze on Wednesday noon.\n     3\t", shown
    edited = text_of(await call(command="str_replace", path="/memories/release_train.md", old_str="Thursdays", new_str="Tuesdays"))
    assert "     1\tReleases ship on Tuesdays." in edited, edited
    text_of(await call(command="insert", path="/memories/release_train.md", insert_line=2, insert_text="Hotfixes any day."))
    listed = json.loads(memory_cli("list", "--json"))
    train = next(m for m in listed if m["file"] == "release_train")
    assert train["description"] == "Releases ship on Tuesdays.", train
    hits = answer(await client.call_tool("recall", {"query": "when do hotfixes ship"}))
    assert hits and hits[0]["file"] == "release_train" and "Hotfixes any day." in hits[0]["body"], hits
    renamed = text_of(await call(command="rename", old_path="/memories/release_train.md", new_path="/memories/releases.md"))
    assert renamed == "Successfully renamed /memories/release_train.md to /memories/releases.md", renamed
    assert "releases.md" in (await client.read_resource("mneme://memory/MEMORY.md")).contents[0].text
    deleted = text_of(await call(command="delete", path="/memories/releases.md"))
    assert deleted.startswith("Successfully deleted /memories/releases.md"), deleted
    everything = {m["file"]: m for m in json.loads(memory_cli("list", "--all", "--json"))}
    assert everything["release_train"]["superseded_by"] == "releases" and everything["releases"]["archived_ms"], everything
    assert "releases.md" not in (await client.read_resource("mneme://memory/MEMORY.md")).contents[0].text


@test("the memory tool refuses every path outside /memories' own files, in words the model can act on")
async def memory_tool_refusals(client):
    call = lambda **input: client.call_tool("memory", input)
    cases = [
        ({"command": "create", "path": "/memories/../../etc/cron.md", "file_text": "x"}, "keep every memory directly in /memories"),
        ({"command": "create", "path": "/etc/passwd", "file_text": "x"}, "Path must start with /memories"),
        ({"command": "create", "path": "/memories/Notes.md", "file_text": "x"}, "lower-case letters, digits"),
        ({"command": "create", "path": "/memories/a\u0000.md", "file_text": "x"}, "lower-case letters, digits"),
        ({"command": "create", "path": "/memories/aux.md", "file_text": "x"}, "names a device"),
        ({"command": "create", "path": "/memories/MEMORY.md", "file_text": "x"}, "the index Mneme keeps"),
        ({"command": "create", "path": "/memories/db_choice.md", "file_text": "x"}, "already exists"),
        ({"command": "create", "path": "/memories/huge.md", "file_text": "x" * 100_001}, "more than the 100000 bytes"),
        ({"command": "view", "path": "/memories/nothing.md"}, "does not exist"),
        ({"command": "delete", "path": "/memories"}, "the memory folder itself"),
        ({"command": "shred", "path": "/memories/db_choice.md"}, "not a command it knows"),
    ]
    for input, words in cases:
        said = refusal(await call(**input))
        assert words in said, (input["command"], input.get("path", "")[:40], said)
    files = {m["file"] for m in json.loads(memory_cli("list", "--all", "--json"))}
    assert not files & {"cron", "notes", "huge", "aux", "memory"}, files
    if STORE[0] == "--root":
        await a_link_out_is_not_followed(call)


async def a_link_out_is_not_followed(call):
    """A memory file that is a symbolic link out of the store (left by a program with a
    shell) is no memory: not listed, read, written through or replaced."""
    with tempfile.TemporaryDirectory() as outside:
        secret = Path(outside, "id_ed25519.md")
        secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
        link = Path(STORE[1], "projects", PROJECT, "memory", "leak.md")
        link.symlink_to(secret)
        try:
            listing = text_of(await call(command="view", path="/memories"))
            assert "leak.md" not in listing, listing
            said = refusal(await call(command="view", path="/memories/leak.md"))
            assert "outside the store" in said, said
            said = refusal(await call(command="create", path="/memories/leak.md", file_text="overwritten"))
            assert "outside the store" in said, said
            said = refusal(await call(command="str_replace", path="/memories/leak.md", old_str="BEGIN", new_str="END"))
            assert "outside the store" in said, said
            assert secret.read_text() == "-----BEGIN OPENSSH PRIVATE KEY-----\n" and link.is_symlink(), secret.read_text()
        finally:
            link.unlink()


@test("each MEMORY.md reads as the index a session loads: the project's, and the global one")
async def memory_md(client):
    read = await client.read_resource("mneme://memory/MEMORY.md")
    text = read.contents[0].text
    assert read.contents[0].mime_type == "text/markdown", "read as it is listed"
    assert "db_choice.md" in text and "Billing runs on PostgreSQL" in text and "tabs.md" not in text, text
    read = await client.read_resource("mneme://memory/global/MEMORY.md")
    text = read.contents[0].text
    assert "tabs.md" in text and "db_choice.md" not in text, text
    for project, file in [("-work-other", "colors.md"), ("-work-lab", "lab.md"), (PROJECT, "db_choice.md")]:
        text = (await client.read_resource(f"mneme://memory/projects/{project}/MEMORY.md")).contents[0].text
        assert file in text and text.count(".md") == 1 + (project == PROJECT) * 2, (project, text)
    encoded = (await client.read_resource("mneme://memory/projects/-work-caf%C3%A9/MEMORY.md")).contents[0].text
    assert "menu.md" in encoded and "The café menu changes weekly" in encoded, encoded


@test("refusals: an unknown session, missing arguments and an unknown resource, each in words a model can act on")
async def refusals(client):
    assert "nope" in refusal(await client.call_tool("show_session", {"id": "nope"}))
    missing = await client.call_tool("recall", {})
    assert missing.is_error and "query" in missing.content[0].text, missing
    for uri, words in [
        ("mneme://memory/other.md", "mneme://memory/projects/{project}/MEMORY.md"),
        ("mneme://memory/projects/..%2Fetc/MEMORY.md", "contains a path separator"),
        ("mneme://memory/projects/%FF/MEMORY.md", "not UTF-8"),
        ("mneme://memory/projects//MEMORY.md", "it is empty"),
        ("mneme://memory/projects/a%01b/MEMORY.md", "control character"),
    ]:
        try:
            await client.read_resource(uri)
            raise AssertionError(f"{uri} was read")
        except MCPError as error:
            assert words in str(error), (uri, error)


CASES = [lists, recall, search, listing, show, instructions, memory_md, refusals, memory_tool, memory_tool_refusals]
# The store and transport the cases run on.
STORE: list[str] = []
SETUP = ""


async def every_case(store, transport, label):
    global STORE, SETUP
    STORE, SETUP = store, label
    seed(store)
    for case in CASES:
        await case(transport)


async def main():
    if not Path(MNEME).exists():
        sys.exit(f"error: no mneme at {MNEME} (cargo xtask test builds it)")
    for transport in ["stdio", "http"]:
        with tempfile.TemporaryDirectory() as root:
            await every_case(["--root", root], transport, f"folder, {transport}")
    cluster = PostgresCluster()
    try:
        await every_case(["--store", cluster.url], "stdio", "PostgreSQL, stdio")
        await four_servers_write_at_once(["--store", cluster.url], "PostgreSQL")
    finally:
        cluster.close()
    with tempfile.TemporaryDirectory() as root:
        await four_servers_write_at_once(["--root", root], "folder")
    await http_server_lifecycle()
    # A client that closes the server's input ends it: the server does not wait for the
    # client to kill it.
    with tempfile.TemporaryDirectory() as root:
        seed(["--root", root])
        server = subprocess.Popen([MNEME, "--root", root, "mcp", "--project", PROJECT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        server.stdin.write((json.dumps(hello) + "\n").encode())
        server.stdin.flush()
        server.stdout.readline()
        server.stdin.close()
        global failures
        try:
            code = server.wait(timeout=20)
            if code != 0:
                failures += 1
                print(f"FAIL the server ends when its client closes its input\n     exit {code}")
            else:
                print("ok   the server ends when its client closes its input")
        except subprocess.TimeoutExpired:
            server.kill()
            failures += 1
            print("FAIL the server ends when its client closes its input\n     still running 20 s later")
    # A store that cannot be opened is said before the server starts, not as a broken pipe.
    refused = subprocess.run([MNEME, "--claude-home", "/nonexistent", "mcp"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if refused.returncode == 0 or "/nonexistent" not in refused.stderr:
        failures += 1
        print(f"FAIL a store that cannot be opened is refused before serving\n     {refused.returncode} {refused.stderr!r}")
    else:
        print("ok   a store that cannot be opened is refused before serving")
    bad = subprocess.run([MNEME, "--root", "/tmp", "mcp", "--project", ".."], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if bad.returncode == 0 or "--project" not in bad.stderr:
        failures += 1
        print(f"FAIL a project name no store can hold is refused before serving\n     {bad.returncode} {bad.stderr!r}")
    else:
        print("ok   a project name no store can hold is refused before serving")
    if failures:
        sys.exit(f"{failures} MCP test(s) failed")
    print("every MCP test passed")


async def report(name, check):
    """Runs `check` (awaited when it is a coroutine), printing ok or FAIL with what failed."""
    global failures
    try:
        done = check()
        if asyncio.iscoroutine(done):
            await done
        print(f"ok   {name}", flush=True)
    except Exception as error:
        failures += 1
        print(f"FAIL {name}", flush=True)
        for cause in leaves(error):
            print(f"     {type(cause).__name__}: {cause}", flush=True)


async def four_servers_write_at_once(store, label):
    """Four MCP servers over one store, each writing memories through the memory tool
    at the same time: every memory is kept, and MEMORY.md lists each once."""
    expected = sorted(f"agent{n}_fact{i}" for n in range(4) for i in range(5))

    async def writer(n):
        params = StdioServerParameters(command=MNEME, args=[*store, "mcp", "--project", PROJECT])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            for i in range(5):
                path = f"/memories/agent{n}_fact{i}.md"
                result = await client.call_tool("memory", {"command": "create", "path": path, "file_text": f"Agent {n} learned fact {i}.\n"})
                assert not result.is_error, result.content[0].text

    async def check():
        await asyncio.wait_for(asyncio.gather(*(writer(n) for n in range(4))), 120)
        # The store may hold other memories: these writers' are named agent…
        listed = sorted(m["file"] for m in json.loads(mneme(store, "memory", "--project", PROJECT, "list", "--json")) if m["file"].startswith("agent"))
        assert listed == expected, (listed, expected)
        index = [line for line in mneme(store, "memory", "--project", PROJECT, "load").splitlines() if line.startswith("- [agent")]
        in_index = sorted(line.split("](")[1].split(".md)")[0] for line in index)
        assert in_index == expected, (in_index, expected)

    await report(f"four servers over one store write 20 memories at once: every memory kept, MEMORY.md lists each once [{label}]", check)


async def http_server_lifecycle():
    """What only HTTP has: a request without the token, from a web page or to another
    host name is refused; a token of the user's own; Ctrl-C or SIGTERM stop the server
    with status 0; a port taken is named."""
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}

    def status(url, headers):
        """The HTTP status of an initialize request with `headers`."""
        sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
        request = urllib.request.Request(url, data=json.dumps(hello).encode(), headers=sent, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    with tempfile.TemporaryDirectory() as root:
        store = ["--root", root]
        seed(store)
        server, url, token = await http_server(store)
        try:
            await report("over HTTP, the token printed is what a request needs (the scheme in any case)", lambda: _equal(
                (status(url, token), status(url, {"Authorization": token["Authorization"].replace("Bearer", "bearer")})), (200, 200)))
            await report("over HTTP, a request without the token, or with another, is refused with 401", lambda: _equal(
                (status(url, {}), status(url, {"Authorization": "Bearer " + "0" * 32}), status(url, {"Authorization": token["Authorization"][:-1]})), (401, 401, 401)))
            await report("over HTTP, a request from a web page (an Origin header) is refused with 403", lambda: _equal(status(url, {**token, "Origin": "https://evil.example"}), 403))
            port = url.split(":")[2].split("/")[0]
            await report("over HTTP, a request to another host name (DNS rebinding) is refused with 403", lambda: _equal(status(url, {**token, "Host": f"evil.example:{port}"}), 403))
        finally:
            interrupted = stop(server)
        await report("over HTTP, Ctrl-C stops the server with status 0", lambda: _equal(interrupted, 0))
        server, _, _ = await http_server(store)
        server.terminate()
        terminated = server.wait(timeout=20)
        await report("over HTTP, SIGTERM as soon as the address is printed stops the server with status 0", lambda: _equal(terminated, 0))
        chosen = {**os.environ, "MNEME_MCP_TOKEN": "a-token-of-my-own-1234"}
        server, url, token = await http_server(store, chosen)
        try:
            await report("over HTTP, $MNEME_MCP_TOKEN is the token, named and not printed", lambda: _equal(
                (token, status(url, {"Authorization": "Bearer a-token-of-my-own-1234"})), ({"Authorization": "Bearer $MNEME_MCP_TOKEN"}, 200)))
            port = url.split(":")[2].split("/")[0]
            taken = subprocess.run([MNEME, *store, "mcp", "--project", PROJECT, "--http", port], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
            await report("over HTTP, a port already taken is refused with a message naming it", lambda: _equal((taken.returncode != 0, f"127.0.0.1:{port}" in taken.stderr), (True, True)))
        finally:
            stop(server)
        short = subprocess.run([MNEME, *store, "mcp", "--http", "0"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30, env={**os.environ, "MNEME_MCP_TOKEN": "short"})
        spaced = subprocess.run([MNEME, *store, "mcp", "--http", "0"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30, env={**os.environ, "MNEME_MCP_TOKEN": "a token with spaces in it"})
        await report("over HTTP, a token too short or that no header carries as it is is refused", lambda: _equal(
            (short.returncode != 0, "16 or more visible ASCII" in short.stderr, spaced.returncode != 0), (True, True, True)))


def _equal(actual, expected):
    assert actual == expected, (actual, expected)


asyncio.run(main())
