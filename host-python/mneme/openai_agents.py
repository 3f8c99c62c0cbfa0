"""The OpenAI Agents SDK's ``Session`` over a Mneme store.

    from agents import Agent, Runner
    from mneme import Mneme
    from mneme.openai_agents import MnemeSession

    session = MnemeSession("conversation-1", Mneme("./sessions"))
    result = await Runner.run(Agent(name="Assistant"), "hi", session=session)

The SDK adds each run's items (the input, reasoning, tool calls and their outputs,
the answer) and reads them back before the next run. Each item is a line of a Claude
Code session (``projects/<project of cwd>/<id>.jsonl``, the id ``session.mneme_id``:
the SDK's ``session_id`` itself when it is one of Mneme's ids, else a mapping of it,
``user:42`` is ``user-42_`` and a hash), written in Claude
Code's shape with the item kept verbatim beside it, so:

- ``get_items`` gives every item back as added (its own text, key order and all, on
  one line), oldest first;
- the session is one ``mneme sessions show``, search, usage, fork and compaction work
  on (and Claude Code resumes): after ``mneme compact`` the SDK's next run starts
  from the summary, a user message, and what the compaction kept;
- a batch is one write: a crash loses a batch whole or keeps it whole, never half of
  it, so a call saved with its output is never saved without it. A call whose output
  never came (the run died between them) stays in the session as it was added;
- ``pop_item`` soft-deletes (the line stays in the file, tombstoned) and
  ``clear_session`` removes the session's files, as ``SQLiteSession`` deletes its rows;
  ``store.archive(session.mneme_id)`` keeps them instead.

The store's redaction applies to items as to every write (all kinds by default): an
item holding an API key comes back with it masked. A session that must give every
byte back calls ``store.set_redaction([])`` first.

Calls run the store synchronously on the caller's thread (an add costs about a
millisecond with its fsync); one store serves any number of sessions.
"""

import os
from typing import Any, Dict, List, Optional

from . import Mneme, MnemeError

__all__ = ["MnemeSession"]

Item = Dict[str, Any]


class MnemeSession:
    """An ``agents.memory.Session`` (``get_items``, ``add_items``, ``pop_item``,
    ``clear_session``) keeping session ``session_id`` in ``store``, an open
    :class:`mneme.Mneme`. A new session is filed under the project of ``cwd`` (the
    current directory when None), as Claude Code files it. ``session_settings``: the
    SDK's ``SessionSettings`` (or a dict of its fields); its ``limit`` is how many of
    the newest items ``get_items`` gives when not told."""

    def __init__(self, session_id: str, store: Mneme, cwd: Optional[str] = None, session_settings: Any = None):
        if not isinstance(store, Mneme):
            raise TypeError(f"MnemeSession takes an open mneme.Mneme store, not {type(store).__name__}")
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a string, not {type(session_id).__name__}")
        self.session_id = session_id
        self.store = store
        #: The id of the Mneme session that keeps the items: what ``mneme sessions
        #: show`` and the store's methods take.
        self.mneme_id = Mneme.session_id_of(session_id)
        self.cwd = os.getcwd() if cwd is None else os.fspath(cwd)
        if session_settings is None or isinstance(session_settings, dict):
            # The SDK's own sessions default to empty settings, and normalise a dict.
            from agents.memory.session_settings import SessionSettings, coerce_session_settings

            session_settings = SessionSettings() if session_settings is None else coerce_session_settings(session_settings)
        self.session_settings = session_settings
        self._closed = False

    def _open(self) -> None:
        if self._closed:
            raise RuntimeError(f"MnemeSession {self.session_id!r} is closed: make a new one (the store stays open)")

    async def get_items(self, limit: Optional[int] = None) -> List[Item]:
        """The session's items, oldest first; the newest ``limit`` (or the settings'
        limit) when given."""
        self._open()
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
        return self.store.items(self.mneme_id, limit=limit)

    async def add_items(self, items: List[Item]) -> None:
        """Adds ``items`` in one write: all of them land, or none."""
        self._open()
        # Anything but an empty list goes to the store, which refuses what is no list.
        if not isinstance(items, (list, tuple)) or items:
            self.store.append_items(self.mneme_id, items, cwd=self.cwd)

    async def pop_item(self) -> Optional[Item]:
        """Soft-deletes the newest item and returns it; None when there is none."""
        self._open()
        return self.store.pop_item(self.mneme_id)

    async def clear_session(self) -> None:
        """Removes the session's files (all its items); a session not there is fine."""
        self._open()
        try:
            self.store.remove(self.mneme_id)
        except MnemeError as error:
            if error.kind != "session-not-found":
                raise

    def close(self) -> None:
        """Ends this session object's use (later calls raise); the store, which other
        sessions may share, stays open."""
        self._closed = True
