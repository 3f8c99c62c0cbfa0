"""A pytest plugin that runs the OpenAI Agents SDK's own session tests (from its
sdist: ``tests/memory/test_session.py``, ``test_session_limit.py``) against
``MnemeSession``: each test module's ``SQLiteSession`` becomes a factory of Mneme
sessions, the database path naming the Mneme folder (two sessions of one path share
a store, as they share a database), ``:memory:`` a fresh folder each time.

The tests that reach into SQLite itself (its connections and worker threads, rows
corrupted by SQL, its file lock, rollbacks forced by patching sqlite3, its error
message for a closed session) are deselected by name, each with why; every other test
runs. Loaded by host-python/tests/openai_agents.py with ``-p openai_agents_plugin``.
"""

import os
import tempfile

from mneme import Mneme
from mneme.openai_agents import MnemeSession

SQLITE_INTERNALS = {
    "test_sqlite_session_close_closes_worker_thread_connections": "SQLite's per-thread connections",
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": "SQLite's per-thread connections",
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": "SQLite's per-thread connections",
    "test_sqlite_session_keeps_connections_of_live_worker_threads": "SQLite's per-thread connections",
    "test_sqlite_session_closed_rejects_empty_add_items": "matches SQLiteSession's own error message",
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": "writes corrupt rows with SQL",
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": "writes corrupt rows with SQL",
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": "writes corrupt rows with SQL",
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": "writes corrupt rows with SQL",
    "test_sqlite_session_file_lock_is_shared_across_instances": "SQLiteSession's class-level file locks",
    "test_sqlite_session_failed_add_items_releases_write_lock": "probes SQLite's write lock with sqlite3",
    "test_sqlite_session_failed_clear_session_rolls_back": "forces a rollback by patching sqlite3",
    "test_sqlite_session_failed_pop_item_releases_write_lock": "probes SQLite's write lock with sqlite3",
    "test_sqlite_session_rollback_failure_evicts_connection": "patches SQLite connections",
    "test_sqlite_session_close_retries_quarantined_connection": "patches SQLite connections",
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": "patches SQLite's worker commit",
}

_stores = {}


def mneme_session(session_id, db_path=":memory:", sessions_table=None, messages_table=None, session_settings=None):
    """``SQLiteSession``'s signature, a ``MnemeSession``."""
    if str(db_path) == ":memory:":
        store = Mneme(tempfile.mkdtemp(prefix="mneme-openai-"))
    else:
        folder = os.fspath(db_path) + ".mneme"
        store = _stores.get(folder)
        if store is None:
            store = _stores[folder] = Mneme(folder)
    return MnemeSession(session_id, store, cwd="/agents/tests", session_settings=session_settings)


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        name = item.name.split("[")[0]
        (dropped if name in SQLITE_INTERNALS else kept).append(item)
        if hasattr(item.module, "SQLiteSession"):
            item.module.SQLiteSession = mneme_session
    items[:] = kept
    config.hook.pytest_deselected(items=dropped)
    for name in sorted({item.name.split("[")[0] for item in dropped}):
        print(f"deselected {name}: {SQLITE_INTERNALS[name]}")
