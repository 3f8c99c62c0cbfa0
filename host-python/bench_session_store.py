"""The Claude Agent SDK's SessionStore workload on Mneme: 10,000 entries of about
0.6 KB appended in batches of 10, then loaded, several runs back to back (these
machines are noisy), on a folder and on PostgreSQL (a throwaway local cluster). Side
by side in the same run: the SDK's own InMemorySessionStore (a ceiling: no storage at
all). The SDK's reference Postgres adapter was measured outside the project on these
machines (issue 53): appends 1,000–12,300 entries/s (median about 2,000), loads about
74,000/s; each Mneme row gives its ratio to those medians. Prints a table; asserts
nothing.

    target/python/bin/python host-python/bench_session_store.py [runs]
"""

import asyncio
import os
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))
from claude_agent_sdk import InMemorySessionStore  # noqa: E402
from harness import PostgresCluster  # noqa: E402

from mneme import Mneme  # noqa: E402
from mneme.claude_agent_sdk import MnemeSessionStore  # noqa: E402
from mneme.postgres import PgStorage  # noqa: E402

ENTRIES = 10_000
BATCH = 10
REFERENCE_APPEND = 2_000
REFERENCE_LOAD = 74_000
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def entries(session):
    """Claude Code lines of about 0.6 KB each, chained."""
    out, parent = [], None
    for n in range(ENTRIES):
        me = str(uuid.UUID(int=n + 1))
        role = "user" if n % 2 == 0 else "assistant"
        out.append({
            "type": role, "uuid": me, "parentUuid": parent, "sessionId": session, "isSidechain": False,
            "cwd": "/home/me/app", "timestamp": f"2026-12-01T09:{n // 600 % 60:02d}:{n // 10 % 60:02d}.{n % 1000:03d}Z",
            "message": {"role": role, "content": [{"type": "text", "text": f"line {n}: " + "lorem ipsum dolor sit amet " * 9}]},
        })
        parent = me
    return out


async def measure(store, key, lines):
    started = time.perf_counter()
    for at in range(0, len(lines), BATCH):
        await store.append(key, lines[at : at + BATCH])
    appended = time.perf_counter() - started
    started = time.perf_counter()
    loaded = await store.load(key)
    read = time.perf_counter() - started
    assert len(loaded) == len(lines)
    return len(lines) / appended, len(lines) / read


async def main():
    session = str(uuid.UUID(int=0xFEED))
    lines = entries(session)
    size = sum(len(str(e)) for e in lines) / len(lines)
    key = {"project_key": "-home-me-app", "session_id": session}
    results = {}
    cluster = PostgresCluster()
    with tempfile.TemporaryDirectory(prefix="mneme-sdk-bench-") as scratch:
        for run in range(runs):
            for name, make in [
                ("Mneme, folder, fsync per batch", lambda: MnemeSessionStore(Mneme(os.path.join(scratch, f"fsync-{run}")))),
                ("Mneme, folder, buffered", lambda: MnemeSessionStore(Mneme(os.path.join(scratch, f"buffered-{run}"), durability="buffered"))),
                ("Mneme, PostgreSQL (a local cluster)", lambda: MnemeSessionStore(Mneme(storage=PgStorage(cluster.url, schema=f"bench_{run}")))),
                ("SDK InMemorySessionStore (no storage)", InMemorySessionStore),
            ]:
                store = make()
                results.setdefault(name, []).append(await measure(store, key, lines))
                if isinstance(store, MnemeSessionStore):
                    store.store.close()
    cluster.close()
    print(f"{ENTRIES:,} entries of ~{size / 1000:.1f} KB, appended in batches of {BATCH}, then loaded; {runs} runs back to back")
    print(f"| store | append entries/s (each run) | × reference {REFERENCE_APPEND:,}/s | load entries/s (each run) | × reference {REFERENCE_LOAD:,}/s |")
    print("|---|---|---|---|---|")
    for name, measured in results.items():
        appends = [a for a, _ in measured]
        loads = [b for _, b in measured]
        print(
            f"| {name} | {', '.join(f'{a:,.0f}' for a in appends)} | {', '.join(f'{a / REFERENCE_APPEND:.1f}' for a in appends)}"
            f" | {', '.join(f'{b:,.0f}' for b in loads)} | {', '.join(f'{b / REFERENCE_LOAD:.1f}' for b in loads)} |"
        )
    print(f"| SDK reference Postgres adapter (measured outside the project; issue 53) | 1,000–12,300, median ~{REFERENCE_APPEND:,} | 1.0 | ~{REFERENCE_LOAD:,} | 1.0 |")


asyncio.run(main())
