"""Appends ``count`` messages ("python 0", "python 1", …) to one session, one call each,
a few milliseconds apart: the Python side of the test that shares a session with
``mneme`` CLI processes. Prints "ready" once the store is open.
    python writer.py <root> <session> <count>"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mneme import Mneme  # noqa: E402

root, session, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Mneme(root) as store:
    print("ready", flush=True)
    for i in range(count):
        store.append(session, role="user", text=f"python {i}", cwd="/w")
        time.sleep(0.003)
