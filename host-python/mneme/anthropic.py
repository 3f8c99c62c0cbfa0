"""Claude's memory tool (``memory_20250818``) for the Anthropic SDK (PyPI ``anthropic``),
kept in a Mneme store: the SDK's own memory-tool classes, so its tool runner executes
the tool over a project's memory files with one line::

    from anthropic import Anthropic
    from mneme import Mneme
    from mneme.anthropic import MnemeMemoryTool

    store = Mneme("./memory-store")
    runner = Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=1024,
        messages=[{"role": "user", "content": "Remember that deploys happen on Tuesdays"}],
        tools=[MnemeMemoryTool(store, project="-home-me-app")],
    )
    for message in runner:
        ...

The model sees a folder ``/memories`` of Markdown files, one memory each; what it
writes is a memory MEMORY.md lists and recall finds, ``delete`` archives and ``rename``
supersedes (nothing is lost), every write takes the scope's lock and the store's
redaction. The rule is the core's, the one ``mneme mcp`` runs (docs/mcp.md). A refusal
(a path outside ``/memories``, a file that exists) is raised as the SDK's
``ToolError``, which the runner sends back as the result marked ``is_error``, in words
the model can act on; a :class:`mneme.MnemeError` is the caller's or the store's.
"""

from typing import Any, Optional

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError

from . import Mneme

__all__ = ["MnemeMemoryTool", "MnemeAsyncMemoryTool"]


def _run(store: Mneme, project: Optional[str], command: Any) -> str:
    """One command, as the SDK parsed it, through the core's memory tool."""
    result = store.memory_tool(project, command.to_dict())
    if result["is_error"]:
        raise ToolError(result["content"])
    return result["content"]


def _clear(store: Mneme, project: Optional[str]) -> str:
    """Archives every current memory of the scope: out of ``/memories``, kept."""
    current = store.memory_list(project)
    for memory in current:
        store.memory_forget(project, memory["file"])
    return f"Archived {len(current)} memories (Mneme keeps them: mneme memory list --all)"


class MnemeMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over ``store``'s memories of ``project`` (a folder name under
    ``projects/`` as Claude Code derives it, ``Mneme.project_of(cwd)``; ``None``: the
    global memories)."""

    def __init__(self, store: Mneme, project: Optional[str] = None, **options: Any) -> None:
        super().__init__(**options)
        self.store, self.project = store, project

    def execute(self, command: Any) -> str:
        return _run(self.store, self.project, command)

    # The core dispatches on `command` itself: every command is the same call.
    view = create = str_replace = insert = delete = rename = execute

    def clear_all_memory(self) -> str:
        return _clear(self.store, self.project)


class MnemeAsyncMemoryTool(BetaAsyncAbstractMemoryTool):
    """:class:`MnemeMemoryTool` for ``AsyncAnthropic``'s runner. Each call runs on the
    event loop's thread: a memory command takes milliseconds, and the store is not
    shared across threads."""

    def __init__(self, store: Mneme, project: Optional[str] = None, **options: Any) -> None:
        super().__init__(**options)
        self.store, self.project = store, project

    async def execute(self, command: Any) -> str:
        return _run(self.store, self.project, command)

    view = create = str_replace = insert = delete = rename = execute

    async def clear_all_memory(self) -> str:
        return _clear(self.store, self.project)
