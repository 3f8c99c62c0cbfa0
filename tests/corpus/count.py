#!/usr/bin/env python3
"""Counts what is in every corpus file, independently of Mneme, with Python's json.

The rules are the ones Mneme documents for its reader: lines end at '\\n' (a trailing
'\\r' is dropped), blank lines are ignored, bytes that are not UTF-8 read as U+FFFD, a
line holding one JSON object is one entry, a line holding several objects back to back
is split (every object counts as recovered), an unreadable unterminated last line is a
torn tail, any other unreadable line is skipped. An entry's type is its "type" field
when that is a string, else "".

Writes expected-counts.json beside this script; tests/corpus.rs compares Mneme to it.
Run: python3 tests/corpus/count.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DECODER = json.JSONDecoder()


def objects(line):
    """The JSON objects a line holds back to back, or None."""
    found, at = [], 0
    while at < len(line):
        while at < len(line) and line[at] in " \t\r\n":
            at += 1
        if at == len(line):
            break
        try:
            value, at = DECODER.raw_decode(line, at)
        except json.JSONDecodeError:
            return None
        if not isinstance(value, dict):
            return None
        found.append(value)
    return found or None


def count(data):
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    terminated = text.endswith("\n")
    if terminated:
        lines.pop()
    result = {"entries": 0, "by_type": {}, "skipped": 0, "torn_tail": False, "recovered_glued": 0, "invalid_utf8": 0}
    raw_lines = data.split(b"\n")
    for number, line in enumerate(lines):
        try:
            raw_lines[number].decode("utf-8")
        except UnicodeDecodeError:
            result["invalid_utf8"] += 1
        if line.endswith("\r"):
            line = line[:-1]
        if line.strip(" \t\r\n\f\v") == "":
            continue
        found = objects(line)
        if found is None:
            if number == len(lines) - 1 and not terminated:
                result["torn_tail"] = True
            else:
                result["skipped"] += 1
            continue
        if len(found) > 1:
            result["recovered_glued"] += len(found)
        for obj in found:
            kind = obj.get("type")
            kind = kind if isinstance(kind, str) else ""
            result["entries"] += 1
            result["by_type"][kind] = result["by_type"].get(kind, 0) + 1
    result["by_type"] = dict(sorted(result["by_type"].items()))
    return result


def main():
    counts = {}
    for folder, _, files in os.walk(HERE):
        for name in files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, HERE)
            if relative in ("count.py", "expected-counts.json"):
                continue
            with open(path, "rb") as f:
                counts[relative] = count(f.read())
    with open(os.path.join(HERE, "expected-counts.json"), "w") as f:
        json.dump(dict(sorted(counts.items())), f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(counts)} files counted")


if __name__ == "__main__":
    main()
