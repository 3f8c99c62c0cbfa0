"""The OpenAI Agents SDK's Session workload, side by side in one run: 10,000 items of
about 0.6 KB added in batches of 10 (`add_items`), then read back whole
(`get_items`) by the same session and by a new one over the same storage, several
runs back to back (these machines are noisy): Mneme's `MnemeSession` on a folder (an
fsync per batch; and buffered) beside the SDK's own `SQLiteSession` on a file, and
on PostgreSQL beside the SDK's `SQLAlchemySession` (asyncpg) on the same server (a
throwaway cluster). Each Mneme row gives its ratio to its peer's run beside it.
Prints a table; asserts nothing but that every item came back as added.

    target/python/bin/python host-python/bench_openai_session.py [runs]
"""

import asyncio
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))
from agents import SQLiteSession  # noqa: E402
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession  # noqa: E402
from harness import PostgresCluster  # noqa: E402

from mneme import Mneme  # noqa: E402
from mneme.openai_agents import MnemeSession  # noqa: E402
from mneme.postgres import PgStorage  # noqa: E402

ITEMS = 10_000
BATCH = 10
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def items():
    """A conversation's items of about 0.6 KB: prompts, answers, calls and outputs."""
    out = []
    for n in range(ITEMS):
        words = f"item {n}: " + "lorem ipsum dolor sit amet " * 20
        kind = n % 4
        if kind == 0:
            out.append({"role": "user", "content": words})
        elif kind == 1:
            out.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "search", "arguments": '{"q":"%s"}' % words[:200], "status": "completed"})
        elif kind == 2:
            out.append({"type": "function_call_output", "call_id": f"call_{n - 1}", "output": words})
        else:
            out.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": words, "annotations": []}]})
    return out


async def measure(open_session, given):
    """Items per second: added, read back by the session that added them, and read
    back by a new session over the same storage (another process's first read)."""
    session = open_session()
    started = time.perf_counter()
    for at in range(0, len(given), BATCH):
        await session.add_items(given[at : at + BATCH])
    added = time.perf_counter() - started
    started = time.perf_counter()
    got = await session.get_items()
    read = time.perf_counter() - started
    assert got == given, "the items did not come back as added"
    started = time.perf_counter()
    cold = await open_session().get_items()
    read_cold = time.perf_counter() - started
    assert cold == given, "the items did not come back as added"
    return len(given) / added, len(given) / read, len(given) / read_cold


async def main():
    given = items()
    size = sum(len(str(i)) for i in given) / len(given)
    results = {}
    peers = {}
    cluster = PostgresCluster()
    try:
        with tempfile.TemporaryDirectory(prefix="mneme-openai-bench-") as scratch:
            for run in range(runs):
                path = os.path.join(scratch, f"sqlite-{run}.db")
                results.setdefault("SDK SQLiteSession, file", []).append(await measure(lambda: SQLiteSession("bench", path), given))
                for name, durability in [("Mneme MnemeSession, folder, fsync per batch", "fsync"), ("Mneme MnemeSession, folder, buffered", "buffered")]:
                    folder = os.path.join(scratch, f"{durability}-{run}")
                    results.setdefault(name, []).append(await measure(lambda: MnemeSession("bench", Mneme(folder, durability=durability), cwd="/home/me/app"), given))
                    peers[name] = "SDK SQLiteSession, file"
                url = f"postgresql+asyncpg://postgres@/postgres?host={cluster.dir}"
                engines = []

                def alchemy():
                    session = SQLAlchemySession.from_url(f"bench-{run}", url=url, create_tables=True)
                    engines.append(session)
                    return session

                results.setdefault("SDK SQLAlchemySession, PostgreSQL (asyncpg)", []).append(await measure(alchemy, given))
                for session in engines:
                    await session.engine.dispose()
                schema = f"bench_{run}"
                results.setdefault("Mneme MnemeSession, PostgreSQL", []).append(
                    await measure(lambda: MnemeSession("bench", Mneme(storage=PgStorage(cluster.url, schema=schema)), cwd="/home/me/app"), given)
                )
                peers["Mneme MnemeSession, PostgreSQL"] = "SDK SQLAlchemySession, PostgreSQL (asyncpg)"
    finally:
        cluster.close()
    print(f"{ITEMS:,} items of ~{size / 1000:.1f} KB, added in batches of {BATCH}, then read back; {runs} runs back to back")
    print("| session | add_items items/s (each run) | × peer | get_items, same session | × | get_items, new session | × |")
    print("|---|---|---|---|---|---|---|")
    for name, measured in results.items():
        peer = results[peers.get(name, name)]
        cells = []
        for column in range(3):
            values = [m[column] for m in measured]
            cells.append(", ".join(f"{v:,.0f}" for v in values))
            cells.append(", ".join(f"{v / p[column]:.2f}" for v, p in zip(values, peer)))
        print(f"| {name} | " + " | ".join(cells) + " |")


asyncio.run(main())
