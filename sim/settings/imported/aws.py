"""AWS SDK retries: ``retry_mode`` and ``max_attempts`` from an AWS config file (INI, ``[default]``
and ``[profile NAME]``) or from the environment (``AWS_RETRY_MODE``, ``AWS_MAX_ATTEMPTS``, which
take precedence over the file, as in the SDKs), onto the ``botocore-*`` presets.

From boto/botocore: ``configprovider.py`` (``retry_mode`` default ``legacy``; ``max_attempts``
from the file or environment is the *total* attempts, the first included, in every mode),
``retries/standard.py`` (``DEFAULT_MAX_ATTEMPTS = 3``) and ``data/_retry.json`` (legacy:
``max_attempts`` 5). Credentials and every other key of the file are neither read nor shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from sim.settings.imported.layer import Knob, Layer
from sim.settings.imported.source import Document, integer, suggest, word

MODES = ("legacy", "standard", "adaptive")
DEFAULT_MODE = "legacy"  # botocore configprovider: retry_mode default 'legacy'
DEFAULT_ATTEMPTS = {"legacy": 5, "standard": 3, "adaptive": 3}  # _retry.json; standard.DEFAULT_MAX_ATTEMPTS
KEYS = ("retry_mode", "max_attempts")
PRESET = {"legacy": "botocore-legacy", "standard": "botocore-standard", "adaptive": "botocore-adaptive"}
NOTES = {"legacy": "legacy mode: botocore's default; other SDKs (Java v2, Go v2, JS v3) default to standard",
         "standard": "standard mode: one retry quota (500 tokens) per client",
         "adaptive": "adaptive mode: standard + a client-side rate limiter once throttled"}
_SECTION = re.compile(r"\[\s*([^\]]+?)\s*\]")
_PAIR = re.compile(r"([^=:\s][^=:]*?)\s*[=:]\s*(.*)")


def parse_ini(text: str, file: str) -> Document:
    """The file's sections and top-level keys, each key's line kept (nested ``s3 =`` blocks and
    comments skipped). ``data`` is ``{section: {key: value}}``."""
    data: dict[str, dict[str, str]] = {}
    lines: dict[tuple, int] = {(): 1}
    section: str | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;" or line[0] in " \t":
            continue  # a comment, or a nested setting (s3 = ... then indented keys)
        m = _SECTION.fullmatch(stripped)
        if m:
            section = m.group(1)
            data.setdefault(section, {})
            lines[(section,)] = n
            continue
        m = _PAIR.fullmatch(stripped)
        if m is None or section is None:
            raise Document(file, data, lines).error((section,) if section else (),
                                                    f"line {n} is not 'key = value' under a [section]",
                                                    "an AWS config file has [default] or [profile NAME] sections")
        key, value = m.group(1).strip(), re.split(r"\s[#;]", m.group(2), maxsplit=1)[0].strip()
        data[section][key] = value
        lines[(section, key)] = n
    return Document(file, data, lines)


def _profile_section(name: str) -> str:
    return "default" if name == "default" else f"profile {name}"


def read(doc: Document, profile: str | None = None, environ: Mapping[str, str] | None = None) -> list[Layer]:
    profiles = {("default" if s == "default" else s[len("profile "):].strip()): s
                for s in doc.data if s == "default" or s.startswith("profile ")}
    if profile is None:
        profile = (environ or {}).get("AWS_PROFILE") or "default"
    notes: list[str] = []
    values: dict[str, tuple[tuple, str]] = {}
    if profile in profiles:
        section = profiles[profile]
        for key, value in doc.data[section].items():
            if key in KEYS:
                values[key] = ((section, key), value)
            else:
                hint = suggest(key, KEYS)
                if hint:  # a misspelt retry key; every other key of the file is the SDK's business
                    raise doc.error((section, key), "is not an AWS retry setting", hint)
    elif doc.data and not environ:
        raise doc.error((), f"has no profile {profile!r}", f"its profiles are {', '.join(profiles) or 'none'}")
    else:
        notes.append(f"no profile {profile!r} in the file: the SDK's defaults")
    env = _environment(doc, environ or {})
    for key, value in env.items():
        values[key] = value
    mode_path, mode = values.get("retry_mode", ((), DEFAULT_MODE))
    mode = word(doc, mode_path, mode.strip().lower() if isinstance(mode, str) else mode, MODES)
    attempts = DEFAULT_ATTEMPTS[mode]
    if "max_attempts" in values:
        path, value = values["max_attempts"]
        attempts = integer(doc, path, value.strip() if isinstance(value, str) else value, minimum=1)
    if "retry_mode" not in values:
        notes.append("no retry_mode: botocore's default, legacy")
    notes.append(NOTES[mode])
    notes.append("every failed attempt (error, throttle, timeout) counts as retryable")
    name = profile
    entry = {"name": name, "preset": PRESET[mode], "max_attempts": attempts}
    knob = Knob("max_attempts", "max_attempts", tuple(sorted({1, 2, 3, 4, 5, attempts})))
    return [Layer(source=doc.file, kind="aws", name=name, attempts=attempts, entry=entry, knob=knob,
                  notes=tuple(notes))]


def _environment(doc: Document, environ: Mapping[str, str]) -> dict[str, tuple[tuple, str]]:
    """AWS_RETRY_MODE and AWS_MAX_ATTEMPTS, located as ``env AWS_...`` in messages."""
    out = {}
    for key, var in (("retry_mode", "AWS_RETRY_MODE"), ("max_attempts", "AWS_MAX_ATTEMPTS")):
        if var in environ and environ[var] != "":
            doc.lines[(f"${var}",)] = 0
            out[key] = ((f"${var}",), environ[var])
    return out
