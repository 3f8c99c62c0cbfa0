"""The few lines every Python test script here shares: run named tests one after
another, each in a scratch folder of its own (an ``async`` one in an event loop of its
own), report each, and end with the count."""

import asyncio
import inspect
import sys
import tempfile
import time
import traceback

failed = 0


def test(name):
    def register(body):
        global failed
        started = time.monotonic()
        try:
            with tempfile.TemporaryDirectory(prefix="mneme-python-") as scratch:
                ran = body(scratch)
                if inspect.iscoroutine(ran):
                    asyncio.run(ran)
            print(f"ok   {name} ({round((time.monotonic() - started) * 1000)} ms)", flush=True)
        except Exception:  # noqa: BLE001 - a failing test is reported, and the others still run
            failed += 1
            print(f"FAIL {name}\n     " + traceback.format_exc().replace("\n", "\n     "), flush=True)
        return body

    return register


def finish(what):
    """Exits with a line for ``what`` that says whether every test passed."""
    print(f"every {what} test passed" if failed == 0 else f"{failed} {what} test(s) failed")
    sys.exit(1 if failed else 0)
