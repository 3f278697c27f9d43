"""Check-your-understanding questions: one source per lesson, ``quizzes/NN-topic.yml``.

A source holds the lesson's folder name and a list of questions.  What a reader sees in a language
is a mapping ``{en: ..., ru: ..., zh: ...}`` (Markdown: inline code, emphasis); everything else
(ids, commands, replies, which option is right) is written once, for all three languages::

    lesson: 01-incr
    questions:
      - id: incr-returns-new-value     # language-independent; the browser keeps answers under it
        kind: predict                  # choice | predict | race
        section: incr-returns          # heading id of the lesson page: the question ends that section
        commands: [SET visits 10, INCR visits]    # predict: replies hidden; the last one is asked
        options: [{id: a, reply: "(integer) 11"}, {id: b, reply: "\\"11\\"", covers: [take_views_returns_str]}]
        answer: a                      # race: a list, every final reply some interleaving gives
        prompt: {en: ..., ru: ..., zh: ...}
        explain: {en: ..., ru: ..., zh: ...}     # why the answer is right
        wrong:                         # per option a reader can get wrong: what the mistake believes
          b: {misconception: {...}, explain: {...}}

An option may name, in ``covers``, the known-wrong patterns of the lesson's lab that it stands for:
the stems of files in ``labs/<lesson>/wrong/`` (``covers: [get_then_set, count_view_get_set]``).
Only an option with a ``wrong`` entry may cover one, and a stem is covered once per lesson;
``tests/foundation/test_quiz.py`` checks that every wrong file of the lab is covered and that
every stem names a file that exists.

Kinds:

* ``choice`` — options carry ``text`` (per language); one is right;
* ``predict`` — a ``redis>`` sequence whose replies are hidden; options are replies as redis-cli
  prints them (:func:`redis_course.core.transcripts.format_reply`); one is right, and
  :mod:`.execute` proves it on fakeredis and on a real server;
* ``race`` — ``setup`` commands, then two ``clients`` whose steps interleave in every possible order:
  ``{run: COMMAND, as: x, if: "x >= 80"}`` (``as`` keeps the reply, as an integer when it is one;
  ``{x+1}`` in a later command of the same client uses it; ``if`` skips the step unless it holds).
  ``check`` is read at the end; the answer is every reply some order gives, and only those.

For a ``race`` question ``wrong`` also covers right options: the explanation shown when a reader
leaves a possible value unticked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from .. import paths
from ..core.backend import CourseError

KINDS = ("choice", "predict", "race")
QUIZZES = paths.ROOT / "quizzes"
MIN_QUESTIONS = 5
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_STEM = re.compile(r"^[a-z0-9_]+$")
_STEP_VAR = re.compile(r"\{([a-z])([+-]\d+)?\}")
_COND = re.compile(r"^\s*([a-z])\s*(==|!=|>=|<=|>|<)\s*(-?\d+|\"[^\"]*\")\s*$")


class QuizError(CourseError):
    """A question source that cannot be used, in one sentence."""


def sources(root: Path | None = None) -> list[Path]:
    return sorted((root or QUIZZES).glob("[0-9][0-9]-*.yml"))


def lesson_names(root: Path | None = None) -> list[str]:
    return [p.stem for p in sources(root)]


def load(lesson: str, root: Path | None = None) -> dict:
    """The question source of ``lesson`` (``01-incr``, or just ``01``), checked."""
    root = root or QUIZZES
    matches = [p for p in sources(root) if p.stem == lesson or p.stem.split("-", 1)[0] == lesson]
    if len(matches) != 1:
        known = ", ".join(lesson_names(root)) or "none"
        raise QuizError(f"No question source for lesson {lesson!r} (known: {known}).")
    return load_file(matches[0])


def load_file(path: Path) -> dict:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise QuizError(
            f"{path}: cannot be read as YAML ({exc.__class__.__name__}: {str(exc).splitlines()[0]})."
        ) from None
    problems = validate(data, path.stem)
    if problems:
        raise QuizError(f"{path}: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    return data


def load_all(root: Path | None = None) -> list[dict]:
    return [load_file(p) for p in sources(root)]


def _text_problems(where: str, value: Any) -> list[str]:
    if not isinstance(value, dict) or set(value) != set(paths.LANGS):
        return [f"{where}: needs text in exactly {', '.join(paths.LANGS)}"]
    return [f"{where}.{lang}: empty" for lang, v in value.items() if not isinstance(v, str) or not v.strip()]


def validate(data: Any, stem: str = "") -> list[str]:
    """Structural problems of a source (one sentence each); [] when usable."""
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        return ["a source is a mapping with `lesson` and a list `questions`"]
    out: list[str] = []
    if stem and data.get("lesson") != stem:
        out.append(f"`lesson` is {data.get('lesson')!r}, the file name says {stem!r}")
    seen: set[str] = set()
    covered: set[str] = set()
    for n, q in enumerate(data["questions"], 1):
        if not isinstance(q, dict):
            out.append(f"question {n} is not a mapping")
            continue
        qid = q.get("id")
        where = f"question {qid or n}"
        if not isinstance(qid, str) or not _ID.match(qid):
            out.append(f"{where}: `id` must be lower-case letters, digits and dashes")
        elif qid in seen:
            out.append(f"{where}: the id is used twice")
        seen.add(str(qid))
        kind = q.get("kind")
        if kind not in KINDS:
            out.append(f"{where}: `kind` must be one of {', '.join(KINDS)}")
            continue
        if not isinstance(q.get("section"), str):
            out.append(f"{where}: `section` (a heading id of the lesson page) is missing")
        out += _text_problems(f"{where}.prompt", q.get("prompt"))
        out += _text_problems(f"{where}.explain", q.get("explain"))
        options = q.get("options")
        if not isinstance(options, list) or len(options) < 2:
            out.append(f"{where}: needs at least two options")
            continue
        ids = [o.get("id") if isinstance(o, dict) else None for o in options]
        if len(set(ids)) != len(ids) or not all(isinstance(i, str) for i in ids):
            out.append(f"{where}: every option needs an id of its own")
            continue
        for o in options:
            covers = o.get("covers", [])
            if not isinstance(covers, list) or not all(isinstance(c, str) and _STEM.match(c) for c in covers):
                out.append(f"{where}.options.{o['id']}: `covers` is a list of file stems of the lab's wrong/ folder")
                covers = []
            for c in covers:
                if c in covered:
                    out.append(f"{where}.options.{o['id']}: `covers` names {c!r}, which another option already covers")
                covered.add(c)
            if covers and not (isinstance(q.get("wrong"), dict) and o["id"] in q["wrong"]):
                out.append(f"{where}.options.{o['id']}: covers a wrong pattern but has no `wrong` entry")
            if kind == "choice":
                out += _text_problems(f"{where}.options.{o['id']}.text", o.get("text"))
            elif not isinstance(o.get("reply"), str) or not o["reply"].strip():
                out.append(f"{where}.options.{o['id']}: `reply` (as redis-cli prints it) is missing")
        answer = q.get("answer")
        right = answer if isinstance(answer, list) else [answer]
        if kind == "race" and not isinstance(answer, list):
            out.append(f"{where}: the answer of a race question is a list of option ids")
        if kind != "race" and isinstance(answer, list):
            out.append(f"{where}: the answer is one option id")
        if not right or any(a not in ids for a in right):
            out.append(f"{where}: the answer names an option that does not exist")
            continue
        wrong = q.get("wrong") or {}
        if not isinstance(wrong, dict):
            out.append(f"{where}: `wrong` maps option ids to a misconception and an explanation")
            continue
        must = set(ids) - set(right)
        for oid in must - set(wrong):
            out.append(f"{where}: wrong option {oid!r} has no misconception and explanation")
        for oid, w in wrong.items():
            if oid not in ids:
                out.append(f"{where}.wrong: no option {oid!r}")
                continue
            if kind != "race" and oid in right:
                out.append(f"{where}.wrong: {oid!r} is the right answer")
            w = w if isinstance(w, dict) else {}
            out += _text_problems(f"{where}.wrong.{oid}.misconception", w.get("misconception"))
            out += _text_problems(f"{where}.wrong.{oid}.explain", w.get("explain"))
        if kind == "predict":
            cmds = q.get("commands")
            if not isinstance(cmds, list) or not cmds or not all(isinstance(c, str) and c.strip() for c in cmds):
                out.append(f"{where}: `commands` must be a list of redis-cli command lines")
        if kind == "race":
            out += _race_problems(where, q)
    if len(seen) < MIN_QUESTIONS:
        out.append(f"only {len(seen)} question(s); a lesson has at least {MIN_QUESTIONS}")
    return out


def _race_problems(where: str, q: dict) -> list[str]:
    out: list[str] = []
    clients = q.get("clients")
    if not isinstance(clients, dict) or len(clients) != 2:
        return [f"{where}: `clients` must name exactly two clients"]
    if not isinstance(q.get("check"), str):
        out.append(f"{where}: `check` (the command read at the end) is missing")
    for name, steps in clients.items():
        if not isinstance(steps, list) or not steps:
            out.append(f"{where}: client {name} has no steps")
            continue
        bound: set[str] = set()
        for s in steps:
            if not isinstance(s, dict) or not isinstance(s.get("run"), str):
                out.append(f"{where}: every step of client {name} is a mapping with `run`")
                continue
            used = {m.group(1) for m in _STEP_VAR.finditer(s["run"])}
            cond = s.get("if")
            if cond is not None:
                m = _COND.match(str(cond))
                if not m:
                    out.append(f'{where}: condition {cond!r} is not `x OP number` or `x OP "text"`')
                else:
                    used.add(m.group(1))
            if used - bound:
                out.append(f"{where}: client {name} uses {sorted(used - bound)} before an `as` binds it")
            if s.get("as"):
                bound.add(str(s["as"]))
    return out


def text(value: dict, lang: str) -> str:
    return value[lang]


def right_ids(q: dict) -> list[str]:
    a = q["answer"]
    return list(a) if isinstance(a, list) else [a]


def covered(src: dict) -> dict[str, str]:
    """The lab's wrong patterns a source covers: file stem -> ``question-id.option-id``."""
    return {c: f"{q['id']}.{o['id']}" for q in src["questions"] for o in q["options"] for c in o.get("covers", [])}


def option(q: dict, oid: str) -> dict:
    return next(o for o in q["options"] if o["id"] == oid)
