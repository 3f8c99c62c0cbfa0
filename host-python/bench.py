"""The Python host's numbers: per-call cost through the component under wasmtime-py,
for the README. Prints a table; asserts nothing.
    target/python/bin/python host-python/bench.py [appends]"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mneme import Mneme  # noqa: E402

appends = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
rows = []


def timed(what, count, body):
    started = time.perf_counter()
    body()
    seconds = time.perf_counter() - started
    rows.append((what, count, f"{seconds * 1e6 / count:.1f} µs", f"{seconds * 1000:.0f} ms"))


with tempfile.TemporaryDirectory(prefix="mneme-python-bench-") as scratch:
    started = time.perf_counter()
    store = Mneme(os.path.join(scratch, "fsync"))
    rows.append(("open (instantiate; the compiled component cached on disk)", 1, "", f"{(time.perf_counter() - started) * 1000:.1f} ms"))
    text = "x" * 200
    timed("append, fsync", appends, lambda: [store.append("s", role="user", text=text, cwd="/w") for _ in range(appends)])
    buffered = Mneme(os.path.join(scratch, "buffered"), durability="buffered")
    timed("append, buffered", appends, lambda: [buffered.append("s", role="user", text=text, cwd="/w") for _ in range(appends)])
    buffered.hold("s")
    timed("append, buffered, session held", appends, lambda: [buffered.append("s", role="user", text=text, cwd="/w") for _ in range(appends)])
    buffered.release("s")
    turn = [{"role": "user", "content": text}, {"role": "assistant", "content": text}] * 5
    timed("append a turn of 10 entries, buffered (per turn)", appends // 10, lambda: [buffered.append_turn("turns", turn, cwd="/w") for _ in range(appends // 10)])
    timed(f"load ({2 * appends} entries)", 5, lambda: [buffered.load("s") for _ in range(5)])
    timed(f"context ({2 * appends} entries)", 5, lambda: [buffered.context("s") for _ in range(5)])
    timed("list (2 sessions)", 20, lambda: [buffered.list() for _ in range(20)])
    timed("check_bytes of one line (no storage calls)", 200, lambda: [Mneme.check_bytes(b'{"type":"user"}\n') for _ in range(200)])
    transcript = "".join(f'{{"type":"user","uuid":"u{n}","message":{{"role":"user","content":"{text}"}}}}\n' for n in range(20_000)).encode()
    timed(f"check_bytes of a {len(transcript) / 1e6:.0f} MB transcript", 3, lambda: [Mneme.check_bytes(transcript) for _ in range(3)])
    crowded = Mneme(os.path.join(scratch, "crowded"), durability="buffered")
    crowded.append("s", role="user", text=text, cwd="/w")
    project = os.path.join(scratch, "crowded", "projects", Mneme.project_of("/w"))
    for n in range(1000):
        open(os.path.join(project, f"other-{n:04d}.jsonl"), "w").close()
    timed("append, buffered, beside 1,000 sessions in its project", appends, lambda: [crowded.append("s", role="user", text=text, cwd="/w") for _ in range(appends)])
    store.close()
    buffered.close()
    crowded.close()

print("| operation | calls | per call | total |\n|---|---|---|---|")
for row in rows:
    print("| " + " | ".join(str(c) for c in row) + " |")
