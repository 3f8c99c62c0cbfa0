"""The Claude Agent SDK's ``SessionStore`` over a Mneme store.

    from claude_agent_sdk import ClaudeAgentOptions, query
    from mneme import Mneme
    from mneme.claude_agent_sdk import MnemeSessionStore

    store = MnemeSessionStore(Mneme("./sessions"))
    async for message in query(prompt="hi", options=ClaudeAgentOptions(session_store=store)):
        ...

The SDK mirrors every transcript line Claude Code writes into the store, keyed by
project folder, session id and (for a sub-agent) subpath, and loads them back to
resume a session on another machine. The lines land where Claude Code keeps them
(``projects/<project>/<session>.jsonl``, ``…/<session>/subagents/agent-<id>.jsonl``),
so the store is a Claude Code home: ``mneme sessions show``, search, usage, fork and
compaction work on every mirrored session, and Claude Code resumes it from the folder.

What the store does to a line:

- **Redaction.** The store's redaction applies, as to every write (all kinds by
  default): a line holding an API key or a private key loads back with the secret
  masked: no secret reaches the disk by any path. A mirror that must load back
  exactly as given calls ``store.set_redaction([])`` first.
- **Retries.** The SDK treats a line's ``uuid`` as its idempotency key: it retries a
  batch whose append raised (an append can raise after its lines landed) and
  re-imports a transcript to fill a gap. A line whose ``uuid`` the transcript holds
  already is not written again. Lines without one (titles, tags) are always written,
  as the SDK's contract says.
- **Failure mid-batch.** A batch is one storage append. A power cut can still tear
  it: the lines before the tear are kept, the torn one is moved aside before the next
  write, and the SDK's retry adds only what is missing.

Calls run the store synchronously on the caller's thread: an append costs about a
millisecond, but the first append to a transcript in a process reads it whole (to
know its ids).
"""

import time
from typing import Any, Dict, List, Optional

from . import Mneme, MnemeError, _json, _parse_many

__all__ = ["MnemeSessionStore"]

Entry = Dict[str, Any]


def _key(key) -> Dict[str, Any]:
    """The SDK's ``SessionKey`` in Mneme's spelling, refused in the SDK's names when it
    is not one."""
    if isinstance(key, dict):
        project, session, subpath = key.get("project_key"), key.get("session_id"), key.get("subpath")
        if isinstance(project, str) and isinstance(session, str) and (subpath is None or isinstance(subpath, str)):
            return {"project": project, "id": session, "subpath": subpath}
    raise MnemeError("invalid-argument", f"the key must be a SessionKey, a dict of project_key, session_id and (optionally) subpath, all strings; not {key!r:.200}")


class MnemeSessionStore:
    """A ``claude_agent_sdk.SessionStore`` (every method, the optional ones too) over
    ``store``, an open :class:`mneme.Mneme`: a folder, so the mirror is a Claude Code
    home that ``mneme`` and Claude Code read."""

    def __init__(self, store: Mneme):
        if not isinstance(store, Mneme):
            raise TypeError(f"MnemeSessionStore takes an open mneme.Mneme store, not {type(store).__name__}")
        self.store = store

    async def append(self, key, entries: List[Entry]) -> None:
        """Appends ``entries`` to the transcript at ``key`` in one write."""
        key = _key(key)
        if not isinstance(entries, (list, tuple)):
            raise MnemeError("invalid-argument", f"entries must be a list of transcript entries (dicts), not {type(entries).__name__}")
        if entries:
            self.store.append_lines(key, [_json("entry", entry) for entry in entries], now=int(time.time() * 1000))

    async def load(self, key) -> Optional[List[Entry]]:
        """Every entry appended at ``key``, in order; None if none ever was."""
        lines = self.store.read_lines(_key(key))
        # One parse of them all: a tenth faster than a parse a line.
        return None if lines is None else _parse_many("[" + ",".join(lines) + "]")

    async def list_sessions(self, project_key: str) -> List[Dict[str, Any]]:
        """The project's sessions (not their sub-agents' transcripts), each with when
        its lines were last written, in epoch milliseconds."""
        return [{"session_id": s["id"], "mtime": s["updated_ms"]} for s in self.store.written_sessions(project_key)]

    async def list_session_summaries(self, project_key: str) -> List[Dict[str, Any]]:
        """Each session's summary, folded by the SDK's own ``fold_session_summary``
        from its lines when asked (none is kept beside them), with its
        ``list_sessions`` time."""
        from claude_agent_sdk import fold_session_summary

        summaries = []
        for session in await self.list_sessions(project_key):
            key = {"project_key": project_key, "session_id": session["session_id"]}
            entries = await self.load(key) or []
            summary = fold_session_summary(None, key, entries)
            summary["mtime"] = session["mtime"]
            summaries.append(summary)
        return summaries

    async def delete(self, key) -> None:
        """Removes the transcript at ``key``; a session's own takes its sub-agents'
        with it. Removing what is not there is fine."""
        self.store.remove_transcript(_key(key))

    async def list_subkeys(self, key) -> List[str]:
        """The subpaths of the session's other transcripts (``subagents/agent-<id>``)."""
        key = _key(key)
        return self.store.subpaths(key["project"], key["id"])
