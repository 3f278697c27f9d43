"""``lab.yml``, checked when a lab is loaded: one sentence naming the file and the key on a mistake.

    title:             {en: ..., ru: ..., zh: ...}   (or one string)      required
    functions:         [count_view, reset]            names solution.py defines   required
    timeout_s:         10                             seconds per call, > 0        default 10
    budget_s:          90                             seconds of all calls of a run, > 0  default 90
    needs_real_redis:  false                          true: skipped on fakeredis   default false
    redis:             single | cluster               the private server's mode    default single
    min_redis:         "7.0"                          oldest Redis the solution runs on (quoted)  default any

An unknown key is refused (``timout_s`` would otherwise be ignored silently), with the known key it
most resembles.  The checks are a few lines of plain Python: a schema library would word its errors
in its own terms (JSON paths, "is not of type"), and an author needs the key and the fix.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from ...l10n.messages import LANGS


class LabConfigError(ValueError):
    """lab.yml is malformed: the message is one sentence naming the file and the key."""


@dataclass(frozen=True)
class Key:
    required: bool
    check: Callable[[Any], str | None]  # None when the value is fine, else what it must be
    default: Any = None


def _title(v: Any) -> str | None:
    if isinstance(v, str) and v.strip():
        return None
    if isinstance(v, dict) and v and all(isinstance(k, str) and isinstance(t, str) and t.strip() for k, t in v.items()):
        unknown = sorted(set(v) - set(LANGS))
        if unknown:
            return f"a mapping of languages {', '.join(LANGS)} (not {', '.join(unknown)})"
        if "en" not in v:
            return "a mapping with an English title under en"
        return None
    return f"a mapping {{{', '.join(f'{lang}: ...' for lang in LANGS)}}} of non-empty strings"


def _functions(v: Any) -> str | None:
    if isinstance(v, list) and v and all(isinstance(x, str) and x.isidentifier() for x in v):
        return None if len(set(v)) == len(v) else "a list of function names without repeats"
    return "a non-empty list of function names, e.g. [count_view, reset]"


def _positive_number(v: Any) -> str | None:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
    return None if ok else "a number of seconds greater than 0"


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "true or false"


def _redis(v: Any) -> str | None:
    return None if v in ("single", "cluster") else "single or cluster"


def _version(v: Any) -> str | None:
    import re

    if isinstance(v, str) and re.fullmatch(r"\d+\.\d+(\.\d+)?", v):
        return None
    return 'a Redis version in quotes, e.g. "7.0" (unquoted, YAML reads 7.0 as a number)'


SCHEMA: dict[str, Key] = {
    "title": Key(True, _title),
    "functions": Key(True, _functions),
    "timeout_s": Key(False, _positive_number, 10),
    "budget_s": Key(False, _positive_number, 90),
    "needs_real_redis": Key(False, _bool, False),
    "redis": Key(False, _redis, "single"),
    "min_redis": Key(False, _version, None),
}


def validate(meta: Any, where: str) -> dict:
    """``meta`` (lab.yml's parsed content) with defaults filled in; raises :class:`LabConfigError`."""
    if not isinstance(meta, dict):
        raise LabConfigError(f"{where}: expected a mapping of keys ({', '.join(SCHEMA)}), got {type(meta).__name__}")
    for key in meta:
        if key not in SCHEMA:
            close = difflib.get_close_matches(str(key), list(SCHEMA), n=1)
            also = f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(SCHEMA)})"
            raise LabConfigError(f"{where}: unknown key {key!r}{also}")
    out = {}
    for key, spec in SCHEMA.items():
        if key not in meta or meta[key] is None:
            if spec.required:
                raise LabConfigError(f"{where}: the key {key!r} is missing")
            out[key] = spec.default
            continue
        problem = spec.check(meta[key])
        if problem:
            raise LabConfigError(f"{where}: {key!r} must be {problem}, not {meta[key]!r}")
        out[key] = meta[key]
    return out


def load(path: Path) -> dict:
    """Read and check ``path`` (a lab.yml)."""
    where = "/".join(Path(path).parts[-2:])
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise LabConfigError(f"{where}:{line} is not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    return validate(data if data is not None else {}, where)
