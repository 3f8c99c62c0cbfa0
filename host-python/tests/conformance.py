"""The conformance vectors (tests/vectors/*.json) for the Python host: the same files,
operations and matching rules as the Rust runner (tests/src/lib.rs) and the JavaScript
one (tests/js/conformance.js); only the dispatch to Python's method names lives here."""

import json
import keyword
import os

from derived import DERIVED

VECTOR_FILES = ["sessions.json", "compaction.json", "turns.json", "memory.json", "index.json", "interchange.json", "retention.json"]


def matches(expected, actual, path=""):
    """None when ``actual`` matches ``expected``, else where it differs."""
    if isinstance(expected, dict) and isinstance(expected.get("$approx"), (int, float)):
        if isinstance(actual, (int, float)) and abs(actual - expected["$approx"]) <= 1e-12 * max(1, abs(expected["$approx"])):
            return None
        return f"{path} (expected about {expected['$approx']}, got {json.dumps(actual)})"
    if isinstance(expected, dict) and isinstance(expected.get("$contains"), str):
        # Any other value is read as its JSON, keys sorted and without spaces.
        text = actual if isinstance(actual, str) else json.dumps(actual, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if actual is not None and expected["$contains"] in text:
            return None
        return f"{path} (expected something containing {json.dumps(expected['$contains'])}, got {json.dumps(actual)})"
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path} (expected {len(expected)} items, got {len(actual)})"
        for i, (e, a) in enumerate(zip(expected, actual)):
            difference = matches(e, a, f"{path}[{i}]")
            if difference:
                return difference
        return None
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            difference = matches(value, actual.get(key), f"{path}.{key}")
            if difference:
                return difference
        return None
    if json.dumps(expected, sort_keys=True) == json.dumps(actual, sort_keys=True):
        return None
    # Numbers: 1 and 1.0 are the same JSON value.
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool) and expected == actual:
        return None
    return f"{path} (expected {json.dumps(expected)}, got {json.dumps(actual)})"


def _outcome(call, MnemeError):
    try:
        return {"ok": call()}
    except MnemeError as error:
        return {"err": error.kind}


def _step(Mneme, MnemeError, store, op, args, state):
    run = lambda call: _outcome(call, MnemeError)  # noqa: E731
    if op == "append":
        return run(lambda: store.append(args["id"], role=args["role"], text=args["text"], cwd=args.get("cwd", "/"), uuid=args.get("uuid"), now=args.get("now_ms")))
    if op == "append_turn":
        return run(lambda: store.append_turn(args["id"], args["messages"], provider=args.get("provider", "anthropic"), cwd=args.get("cwd", "/"), uuid=args.get("uuid"), now=args.get("now_ms"), parent=args.get("parent"), agent=args.get("agent")))
    if op == "provider_context":
        return run(lambda: store.provider_context(args["id"], provider=args.get("provider", "anthropic"), injections=args.get("injections", []), model=args.get("model")))
    if op == "set_redaction":
        return run(lambda: store.set_redaction(args["kinds"]))
    if op == "set_embeddings":
        return run(lambda: store.set_embeddings(args.get("table")))
    if op == "context":
        return run(lambda: store.context(args["id"]))
    if op == "import_session":
        return run(lambda: store.import_session(args["text"], from_=args.get("source"), id=args.get("id"), cwd=args.get("cwd"), origin=args["origin"], uuid=args["uuid"], now=args["now_ms"]))
    if op == "export_session":
        result = run(lambda: store.export_session(args["id"], args["to"], args["uuid"]))
        if "ok" in result:
            exported = dict(result["ok"])
            data = exported.pop("data")
            if not isinstance(data, bytes):
                raise TypeError(f"export_session gave {type(data).__name__} data, not bytes")
            exported["text"] = data.decode()
            result = {"ok": exported}
        return result
    if op == "project_of":
        return run(lambda: Mneme.project_of(args["cwd"]))
    if op == "session_id_of":
        return run(lambda: store.session_id_of(args["name"]))
    if op == "check_bytes":
        return run(lambda: Mneme.check_bytes(args["text"].encode()))
    if op == "stored_keys":
        return {"ok": [key for key, _ in store.storage.list(args["prefix"])]}
    if op == "append_items":
        return run(lambda: store.append_items(args["id"], args["items"], args["cwd"], args["uuid"], args["now_ms"]))
    if op == "plan_compaction":
        result = run(lambda: store.plan_compaction(args["id"], args.get("settings", {}), args.get("mode", "auto")))
        state["plan"] = result.get("ok")
        return result
    if op == "compact":
        summary = args.get("summary")
        if summary is None:
            summary = store.summarize_offline(args["id"], state["plan"])
        return run(lambda: store.apply_compaction(args["id"], state["plan"], summary, boundary=args.get("boundary"), summary_uuid=args.get("summary_uuid"), now=args.get("now_ms")))
    if op.startswith("memory_"):
        project = args.get("project")
        calls = {
            "memory_add": lambda: store.memory_add(project, args["memory"], args["now_ms"]),
            "memory_add_many": lambda: store.memory_add_many(project, args["memories"], args["now_ms"]),
            "memory_supersede": lambda: store.memory_supersede(project, args["file"], args["memory"], args["now_ms"]),
            "memory_list": lambda: store.memory_list(project, args.get("filter")),
            "memory_recall": lambda: store.memory_recall(project, args["query"], args["limit"], args.get("all", False), args.get("since_ms"), args.get("until_ms"), args.get("near")),
        }
        if op in calls:
            return run(calls[op])
    if op == "plan_embedding":
        result = run(lambda: store.plan_embedding(args.get("project"), args["model"], args["limit"]))
        state["embedding"] = result.get("ok")
        return result
    if op == "apply_embedding":
        return run(lambda: store.apply_embedding(args.get("project"), state["embedding"], args["vectors"]))
    if op == "plan_extraction":
        result = run(lambda: store.plan_extraction(args.get("project"), args["id"]))
        state["extraction"] = result.get("ok")
        return result
    if op == "apply_extraction":
        return run(lambda: store.apply_extraction(args.get("project"), state["extraction"], args["answer"], args["now_ms"]))
    if op == "plan_consolidation":
        result = run(lambda: store.plan_consolidation(args.get("project"), args["now_ms"]))
        state["consolidation"] = result.get("ok")
        return result
    if op == "apply_consolidation":
        return run(lambda: store.apply_consolidation(args.get("project"), state["consolidation"], args["answer"], args.get("dry_run") is True, args["now_ms"]))
    if op == "instructions":
        return run(lambda: store.instructions(args))
    if op == "resolve":
        return run(lambda: store.resolve(args["inbound"], args.get("policy"), args["now_ms"], args["new_session_id"]))
    if op == "rollover":
        return run(lambda: store.rollover(args["key"], args["summary"], args["new_session_id"], args["boundary"], args["summary_uuid"], args["now_ms"]))
    if op == "import_openclaw_keys":
        return run(lambda: store.import_openclaw_keys(args["text"]))
    if op == "key_of":
        return run(lambda: store.key_of(args["inbound"], args.get("policy")))
    if op == "parse_key":
        return run(lambda: store.parse_key(args["key"]))
    if op in DERIVED:
        # An operation whose method is derived from the WIT is called by the rule it was derived by.
        derived = DERIVED[op]
        positional, keywords = _derived_arguments(op, derived["arguments"], args)
        result = run(lambda: getattr(store, op)(*positional, **keywords))
        if not derived["bytes"] or "ok" not in result:
            return result
        if not isinstance(result["ok"], bytes):
            raise TypeError(f"{op} gave {type(result['ok']).__name__}, not bytes")
        # Bytes as text, as the Rust runner gives them.
        return {"ok": result["ok"].decode()}
    raise ValueError(f"unknown operation {op}")


def _derived_arguments(op, taken, args):
    """A step's arguments for a derived method, in its order, options by name: what a
    step must give (``given``, ``now``) and a name the method does not take are the
    vector's mistakes, not an outcome."""
    names = [name for name, _, _ in taken]
    unknown = [name for name in args if name not in names]
    if unknown:
        raise ValueError(f"{op} takes no `{unknown[0]}`")
    missing = [name for name, how, _ in taken if how in ("given", "now") and name not in args]
    if missing:
        raise ValueError(f"{op} needs `{missing[0]}`")
    positional, keywords, by_name = [], {}, False
    for name, how, option in taken:
        value = args.get(name)
        if how == "default" and value is None:
            # Left out: the method's own default; what follows goes by name.
            by_name = True
        elif option is not None or by_name:
            keywords[_keyword(option or name, how)] = value
        else:
            positional.append(value)
    return positional, keywords


def _keyword(name, how):
    """The Python parameter a step's argument is: ``now`` for ``now_ms``, a Python
    keyword with a ``_``."""
    if how == "now":
        return "now"
    return f"{name}_" if keyword.iskeyword(name) else name


def run_vectors(Mneme, MnemeError, vectors_dir, scratch):
    """Runs every vector on a fresh store under ``scratch``; returns (results, failures)."""
    results, failures = [], []
    for file in VECTOR_FILES:
        with open(os.path.join(vectors_dir, file), encoding="utf-8") as handle:
            vectors = json.load(handle)
        for index, vector in enumerate(vectors):
            root = os.path.join(scratch, f"{file}-{index}")
            limits = vector.get("limits", {})
            store = Mneme(root, part_bytes=limits.get("part_bytes", 0), total_bytes=limits.get("total_bytes", 0), durability="buffered")
            for key, text in vector.get("files", {}).items():
                store.storage.replace(key, text.encode(), None)
            outcomes, state = [], {}
            for i, step in enumerate(vector["steps"]):
                op = next(k for k in step if k != "expect")
                actual = _step(Mneme, MnemeError, store, op, step[op], state)
                difference = matches(step["expect"], actual)
                if difference:
                    failures.append(f"{file}: {vector['name']}: step {i} ({op}) differs at {difference}")
                outcomes.append(actual)
            results.append([vector["name"], outcomes])
            store.close()
    return results, failures


def canonical(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
