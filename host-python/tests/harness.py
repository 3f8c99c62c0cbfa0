"""The few lines every Python test script here shares: run named tests one after
another, each in a scratch folder of its own (an ``async`` one in an event loop of its
own), report each, and end with the count; a mock model API on 127.0.0.1; a code block
of the package README."""

import asyncio
import http.server
import inspect
import json
import os
import sys
import tempfile
import threading
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


class MockApi:
    """A model API on 127.0.0.1: each POST to a path starting with ``path`` is answered
    with ``answer(body, n)`` (``(content type, payload bytes)``; ``n`` counts the
    requests from 1), others with 404; every request body is kept in ``requests``."""

    def __init__(self, path, answer):
        self.requests = []
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                if not self.path.startswith(path):
                    self.send_response(404)
                    self.end_headers()
                    return
                api.requests.append(body)
                kind, payload = answer(body, len(api.requests))
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def readme_block(heading, number):
    """Block ``number`` (0-based) of the ```python blocks under ``## heading`` in the
    Python package's README, as written."""
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md"), encoding="utf-8") as file:
        section = file.read().partition(f"\n## {heading}\n")[2].partition("\n## ")[0]
    return section.split("\n```python\n")[number + 1].partition("\n```\n")[0] + "\n"


class PostgresCluster:
    """A throwaway PostgreSQL cluster in a temporary folder, as host-postgres/src/cluster.rs
    makes one: ``initdb``, then a server on a Unix socket in that folder only; stopped
    and deleted by ``close``. As root, the cluster belongs to the ``postgres`` user
    (``initdb`` refuses root). ``$PG_BIN``, else the newest server in /usr/lib/postgresql."""

    def __init__(self):
        import shutil
        import subprocess

        self._subprocess, self._shutil = subprocess, shutil
        bin_dir = os.environ.get("PG_BIN")
        if not bin_dir:
            versions = sorted((int(v), v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit() and os.path.exists(f"/usr/lib/postgresql/{v}/bin/initdb"))
            if not versions:
                raise RuntimeError("no PostgreSQL server in /usr/lib/postgresql: install it (cargo xtask setup does) or set PG_BIN")
            bin_dir = f"/usr/lib/postgresql/{versions[-1][1]}/bin"
        self.bin = bin_dir
        self.dir = tempfile.mkdtemp(prefix="mneme-pg-")
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            subprocess.run(["chown", "-R", "postgres:postgres", self.dir], check=True)
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C")
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-o", f"-k {self.dir} -c listen_addresses=''", "start")
        self.url = f"host={self.dir} user=postgres dbname=postgres"

    @property
    def data(self):
        return os.path.join(self.dir, "data")

    def _run(self, program, *args):
        command = [os.path.join(self.bin, program), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        ran = self._subprocess.run(command, capture_output=True, text=True)
        if ran.returncode != 0:
            raise RuntimeError(f"{program} failed ({ran.returncode}): {ran.stdout}{ran.stderr}")

    def close(self):
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            self._shutil.rmtree(self.dir, ignore_errors=True)
