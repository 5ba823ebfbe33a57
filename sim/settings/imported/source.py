"""A settings file as plain data that still knows where each key was written.

Every reader reports a mistake as one line naming the file, the line and the key
(``envoy.yaml:14: key 'retry_policy.num_retries': must be ...``). So the documents are read into
plain dicts and lists together with ``lines``: the line of every key (and list item), found by a
small JSON scanner here (JSON needs no PyYAML) or from PyYAML's node marks.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sim.vocabulary.errors import ConfigError

Path = tuple[Any, ...]  # keys and list positions from the document's root
YAML_HINT = "pip install PyYAML (or: pip install 'backoff-sim[settings]'); JSON settings need nothing"


def dotted(path: Path) -> str:
    """``('route', 'retry_policy', 0)`` → ``route.retry_policy[0]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """``did you mean 'num_retries'?`` for a close spelling (the config's own rule)."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {match[0]!r}?" if match else None


@dataclass
class Document:
    """One parsed document of a settings file and the line of each path in it."""

    file: str
    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    base: Path = ()  # where ``data`` sits in the file (several YAML documents: ``(n,)``)

    def line(self, path: Path) -> int:
        """The line of ``path``, else of its nearest parent that has one (a missing key)."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)

    def error(self, path: Path, message: str, hint: str | None = None) -> ConfigError:
        """The one-line error for ``path``: ``file:line: key 'a.b': message (hint)``."""
        line = self.line(path)  # 0: not in the file (an environment variable)
        where = self.file if line == 0 else f"{self.file}:{line}"
        return ConfigError(message, file=where, key=dotted(path) or None, hint=hint)

    def at(self, path: Path) -> Any:
        value = self.data
        for part in path:
            value = value[part]
        return value


# --- JSON ---------------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class _JsonScanner:
    """Strict JSON, plus the ``//`` and ``/* */`` comments and trailing commas that .NET's
    appsettings.json reader allows; records the line of each key and list item."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.lines: dict[Path, int] = {}

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos)

    def fail(self, pos: int, message: str) -> ConfigError:
        return ConfigError(f"invalid JSON: {message}", file=f"{self.file}:{self.line_of(pos)}",
                           hint="check the brackets, quotes and commas near that line")

    def skip(self, i: int) -> int:
        text = self.text
        while i < len(text):
            c = text[i]
            if c in " \t\r\n\ufeff":
                i += 1
            elif text.startswith("//", i):
                end = text.find("\n", i)
                i = len(text) if end < 0 else end + 1
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    raise self.fail(i, "a /* comment is never closed")
                i = end + 2
            else:
                break
        return i

    def parse(self) -> Any:
        i = self.skip(0)
        if i >= len(self.text):
            raise self.fail(i, "the file is empty")
        self.lines[()] = self.line_of(i)
        value, i = self.value(i, ())
        i = self.skip(i)
        if i < len(self.text):
            raise self.fail(i, f"unexpected {self.text[i]!r} after the document's end")
        return value

    def value(self, i: int, path: Path) -> tuple[Any, int]:
        text = self.text
        if i >= len(text):
            raise self.fail(i, "the file ends inside a value")
        c = text[i]
        if c == "{":
            return self.mapping(i, path)
        if c == "[":
            return self.sequence(i, path)
        if c == '"':
            return self.string(i)
        m = _NUMBER.match(text, i)
        if m:
            s = m.group()
            return (float(s) if any(ch in s for ch in ".eE") else int(s)), m.end()
        for word, literal in _LITERALS.items():
            if text.startswith(word, i):
                return literal, i + len(word)
        raise self.fail(i, f"unexpected {c!r}")

    def string(self, i: int) -> tuple[str, int]:
        try:
            return json.decoder.scanstring(self.text, i + 1)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.pos, exc.msg) from None

    def mapping(self, i: int, path: Path) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        i = self.skip(i + 1)
        while True:
            if i < len(self.text) and self.text[i] == "}":
                return out, i + 1
            if i >= len(self.text) or self.text[i] != '"':
                raise self.fail(i, "expected a quoted key or '}'")
            key_at = i
            key, i = self.string(i)
            if key in out:
                raise ConfigError("is given twice", file=f"{self.file}:{self.line_of(key_at)}",
                                  key=dotted(path + (key,)), hint="keep one of them")
            self.lines[path + (key,)] = self.line_of(key_at)
            i = self.skip(i)
            if i >= len(self.text) or self.text[i] != ":":
                raise self.fail(i, f"expected ':' after the key {key!r}")
            i = self.skip(i + 1)
            out[key], i = self.value(i, path + (key,))
            i = self.skip(i)
            if i < len(self.text) and self.text[i] == ",":
                i = self.skip(i + 1)
            elif i >= len(self.text) or self.text[i] != "}":
                raise self.fail(i, "expected ',' or '}'")

    def sequence(self, i: int, path: Path) -> tuple[list[Any], int]:
        out: list[Any] = []
        i = self.skip(i + 1)
        while True:
            if i < len(self.text) and self.text[i] == "]":
                return out, i + 1
            self.lines[path + (len(out),)] = self.line_of(i)
            item, i = self.value(i, path + (len(out),))
            out.append(item)
            i = self.skip(i)
            if i < len(self.text) and self.text[i] == ",":
                i = self.skip(i + 1)
            elif i >= len(self.text) or self.text[i] != "]":
                raise self.fail(i, "expected ',' or ']'")


def load_json(text: str, file: str) -> Document:
    """A JSON settings file (comments and trailing commas allowed) with the line of each key."""
    scanner = _JsonScanner(text, file)
    try:
        data = scanner.parse()
    except RecursionError:
        raise ConfigError("is nested too deeply to read", file=file) from None
    return Document(file, data, scanner.lines)


# --- YAML ---------------------------------------------------------------------------------------

def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        return None
    return yaml


def load_yaml(text: str, file: str) -> list[Document]:
    """Every document of a YAML file, each with the line of each key (PyYAML's node marks)."""
    yaml = _yaml()
    if yaml is None:
        raise ConfigError("is YAML, and reading YAML needs PyYAML, which is not installed", file=file,
                          hint=YAML_HINT)
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{file}:{mark.line + 1}" if mark is not None else file
        raise ConfigError(f"invalid YAML: {exc.problem or exc.context}", file=where,
                          hint="check the indentation and the ':' near that line") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from None
    constructor = yaml.constructor.SafeConstructor()
    docs = []
    for n, node in enumerate(nodes):
        if node is None:
            continue
        lines: dict[Path, int] = {(): node.start_mark.line + 1}
        docs.append(Document(file, _plain(yaml, constructor, node, (), lines, file), lines))
    return docs


def _plain(yaml: Any, constructor: Any, node: Any, path: Path, lines: dict[Path, int], file: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _plain(yaml, constructor, key_node, path, lines, file)
            if key == "<<" and isinstance(value_node, yaml.MappingNode):  # a merge key: its keys below
                merged = _plain(yaml, constructor, value_node, path, lines, file)
                for k, v in merged.items():
                    out.setdefault(k, v)
                continue
            if not isinstance(key, (str, int, float, bool)):
                raise ConfigError("a key must be a plain word", file=f"{file}:{key_node.start_mark.line + 1}",
                                  key=dotted(path) or None)
            key = str(key) if not isinstance(key, str) else key
            if key in out:
                raise ConfigError("is given twice", file=f"{file}:{key_node.start_mark.line + 1}",
                                  key=dotted(path + (key,)), hint="keep one of them")
            lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _plain(yaml, constructor, value_node, path + (key,), lines, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            items.append(_plain(yaml, constructor, item, path + (i,), lines, file))
        return items
    try:
        return constructor.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML value: {exc}", file=f"{file}:{node.start_mark.line + 1}",
                          key=dotted(path) or None) from None


# --- checks every reader shares -----------------------------------------------------------------

def check_keys(doc: Document, path: Path, table: Mapping[str, Any], known: Iterable[str], what: str) -> None:
    """Refuse a key the format does not have, with ``did you mean`` where one is close."""
    known = list(known)
    for key in table:
        if key not in known:
            raise doc.error(path + (key,), f"is not a key of {what}",
                            suggest(str(key), known) or f"it takes {', '.join(known)}")


def table(doc: Document, path: Path, value: Any, example: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise doc.error(path, f"must be a table of keys, got {_kind(value)}", f"e.g. {example}")
    return value


def integer(doc: Document, path: Path, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        value = int(value)  # proto3 JSON writes 64-bit integers as strings; INI values are text
    example = f"e.g. {max(minimum, 3) if minimum is not None else 3}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise doc.error(path, f"must be a whole number, got {_kind(value)} {value!r}", f"write a number, {example}")
    if minimum is not None and value < minimum:
        raise doc.error(path, f"must be >= {minimum}, got {value}", example)
    if maximum is not None and value > maximum:
        raise doc.error(path, f"must be <= {maximum}, got {value}", f"e.g. {maximum}")
    return value


def number(doc: Document, path: Path, value: Any, minimum: float | None = None, maximum: float | None = None,
           positive: bool = False) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise doc.error(path, f"must be a number, got {_kind(value)} {value!r}", "write a number, e.g. 0.5")
    if positive and not value > 0:
        raise doc.error(path, f"must be > 0, got {value}")
    if minimum is not None and value < minimum:
        raise doc.error(path, f"must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise doc.error(path, f"must be <= {maximum}, got {value}")
    return float(value)


def boolean(doc: Document, path: Path, value: Any) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"  # Spring and .NET bind "true"/"false" strings
    if not isinstance(value, bool):
        raise doc.error(path, f"must be true or false, got {value!r}", "write true or false")
    return value


def word(doc: Document, path: Path, value: Any, choices: Iterable[str], fold: bool = False) -> str:
    choices = list(choices)
    if isinstance(value, str):
        for choice in choices:
            if value == choice or (fold and value.lower() == choice.lower()):
                return choice
    raise doc.error(path, f"must be one of {', '.join(choices)}, got {value!r}",
                    suggest(str(value), choices) if isinstance(value, str) else None)


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "a table", type(None): "nothing"}.get(type(value), type(value).__name__)
