"""``course check [LAB] [--lang ru|en|zh] [--verbose]``: the student runs the public tests of one or all labs.

Each lab runs in the same isolated runner as grading, on a private Redis (redis-server when it is
installed, else a fakeredis server), or on the server in ``REDIS_URL`` under a fresh key prefix.

What the student reads, in their language: one line per test (its title, its points, and for a
failure what was expected and what the code did, in one phrase, then the lab's hint); a module that
cannot be imported is said once, and no test is listed or scored; a lab whose functions all still
raise NotImplementedError is one line when every lab is checked.  ``--verbose`` adds everything
else: the whole failure message, the lines of the student's code it points at, what the code printed.

A lab whose ``lab.yml`` says ``min_redis: "7.0"`` (it uses a newer command: GETDEL is 6.2,
``PEXPIRE ... NX`` 7.0) is not run on an older server: on the one in ``REDIS_URL`` it is one sentence
naming the version needed instead of failing tests the student cannot fix; an older private
``redis-server`` gives way to fakeredis, which emulates Redis 7 (:func:`backend_for`; the grader and
the Gradescope autograder use the same rule).
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from ...l10n import N_, _, ngettext
from ..authoring.model import Lab, discover, find_lab
from ..engine.runner import LabResult, TestResult, run_lab
from ..sandbox.limits import Limits
from .texts import plain_text, t


def _version(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text or "")[:3])


def min_redis(lab: Lab) -> str | None:
    """The oldest Redis the lab's reference runs on (lab.yml ``min_redis``), or None: any."""
    return lab.meta.get("min_redis")


def too_old(lab: Lab, version: str | None) -> bool:
    """Whether a Redis of ``version`` is older than ``lab`` needs (an unknown version is not)."""
    needed = min_redis(lab)
    return bool(needed and version and _version(version) < _version(needed))


def url_version(url: str) -> str | None:
    """The version of the Redis at ``url`` (None when it cannot be asked: the run says why)."""
    from ...core.backend import CourseError, connect

    try:
        c = connect(url, socket_timeout=5)
        try:
            return c.server_version()
        finally:
            c.close()
    except (CourseError, OSError, Exception):  # noqa: BLE001 - the run itself reports an unreachable server
        return None


def url_refusal(lab: Lab, url: str, lang: str) -> str | None:
    """One sentence when the server in ``url`` is older than the lab needs, else None."""
    version = url_version(url)
    if not too_old(lab, version):
        return None
    return _(
        "Lab {lab} needs Redis {needed} or newer, and the server in REDIS_URL is Redis {version}: "
        "point REDIS_URL at a newer server, or unset it to check on fakeredis.",
        lang=lang,
        lab=lab.number,
        needed=min_redis(lab),
        version=version,
    )


def backend_for(lab: Lab, backend: str, lang: str | None) -> tuple[str, str | None]:
    """The private backend to run ``lab`` on, and a sentence when it is not the one asked for.
    ``auto`` with a ``redis-server`` older than the lab needs gives fakeredis (unless the lab needs a
    real server); an explicit ``redis-server`` is kept, and the sentence says it is too old."""
    from ...core.servers import redis_server_binary, redis_server_version

    if backend == "fakeredis" or not redis_server_binary():
        return backend, None
    version = redis_server_version()
    if not too_old(lab, version):
        return backend, None
    if backend == "auto" and not lab.needs_real_redis:
        return "fakeredis", _(
            "Lab {lab} needs Redis {needed} or newer and redis-server here is {version}, so it runs on fakeredis.",
            lang=lang,
            lab=lab.number,
            needed=min_redis(lab),
            version=version,
        )
    return backend, _(
        "Lab {lab} needs Redis {needed} or newer, and redis-server here is Redis {version}: "
        "install a newer one, or use --backend fakeredis.",
        lang=lang,
        lab=lab.number,
        needed=min_redis(lab),
        version=version,
    )


NOT_STARTED = "not-implemented"
_IMPORT_FAILURES = [  # the sandbox's English words for a module that did not load -> the student's
    (re.compile(r"^loading the module failed: (?P<error>.*)", re.S), N_("lab.py could not be imported: {error}")),
    (
        re.compile(r"^the module did not load within (?P<seconds>[\d.]+) s"),
        N_("lab.py could not be imported: loading it took more than {seconds} s"),
    ),
    (
        re.compile(r"^the process ended while loading the module \((?P<error>.*)\)", re.S),
        N_("lab.py could not be imported: the process ended while loading it ({error})"),
    ),
]


def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, n: int) -> str:
    return text + " " * max(0, n - width(text))


def fmt_points(x: float) -> str:
    return f"{x:g}"


def import_failure(message: str, lang: str) -> list[str]:
    """A module that did not load, in the student's words: its first line, then (verbose) the rest."""
    text = (message or "").strip()
    for pattern, words in _IMPORT_FAILURES:
        m = pattern.match(text)
        if m:
            fields = m.groupdict()
            first, *rest = fields.get("error", "").splitlines() or [""]
            fields["error"] = first
            return [_(words, lang=lang, **fields)] + rest
    first, *rest = text.splitlines() or [""]
    return [_("lab.py could not be imported: {error}", lang=lang, error=first)] + rest


def syntax_error_lines(source: Path | None) -> list[str]:
    """The student's line a SyntaxError points at, with a caret under the place (checked here, in the
    trusted process, by compiling the file without running it)."""
    if source is None or not Path(source).is_file():
        return []
    try:
        compile(Path(source).read_bytes(), "lab.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        if not exc.text or not exc.lineno:
            return []
        text = exc.text.rstrip("\n").expandtabs()
        stripped = text.lstrip()
        col = max(0, (exc.offset or 1) - 1 - (len(text) - len(stripped)))
        prefix = f"{exc.lineno} | "
        return [prefix + stripped[:120], " " * (len(prefix) + min(col, 120)) + "^"]
    except (ValueError, OSError):
        return []
    return []


def _groups(tests: list[TestResult]) -> list[list[TestResult]]:
    """The cases of one parametrized test together, in the order they ran."""
    out: dict[str, list[TestResult]] = {}
    for test in tests:
        out.setdefault(test.name.split("[")[0], []).append(test)
    return list(out.values())


_COURSE_ERROR = "CourseError: "


def _environment_error(failing: list[list[TestResult]]) -> str | None:
    """The course's own error (a Redis it cannot reach, a wrong REDIS_URL) when every failing test
    failed with that same message: it is about the machine, not the code."""
    messages = {(x.message or "").strip() for g in failing for x in g if not x.passed and x.outcome != "skipped"}
    if len(messages) != 1:
        return None
    message = messages.pop()
    return message[len(_COURSE_ERROR) :].strip() if message.startswith(_COURSE_ERROR) and "\n" not in message else None


def _phrase(test: TestResult, lang: str) -> str:
    """What went wrong in one test, in one line."""
    first = (test.message or "").strip().splitlines()
    text = first[0] if first else t(test.event or test.outcome, lang)
    if len(text) <= 200:
        return text
    cut = text[:199]
    space = cut.rfind(" ")
    return (cut[:space] if space > 150 else cut).rstrip(" ,;:") + "…"  # not in the middle of a word


def test_line(lab: Lab, group: list[TestResult], lang: str, title_w: int = 0, *, said: bool = False) -> str:
    """One line for one test (all its parametrized cases): mark, title, points, and for a failure
    the phrase and the hint."""
    counted = [x for x in group if x.counted]
    points = sum(x.points for x in counted)
    max_points = sum(x.max_points for x in counted)
    failed = [x for x in group if not x.passed and x.outcome != "skipped"]
    title = lab.test_title(group[0].name.split("[")[0], lang)
    pts = f"{fmt_points(points)}/{fmt_points(max_points)}" if counted else "–"
    if not failed:
        mark = "✓" if counted else "–"
        tail = "" if counted else "  " + _("skipped: {reason}", lang=lang, reason=group[0].message.strip()[:120])
        return f"  {mark} {pad(title, title_w)}  {pts}{tail}".rstrip()
    x = failed[0]
    phrase = "" if said else _phrase(x, lang)  # said: the lab's head line told why every test fails
    if len(group) > 1:
        case = x.name.partition("[")[2].rstrip("]")
        phrase = ngettext(
            "{phrase} (case {case}; {n} case of {total} fails)",
            "{phrase} (case {case}; {n} cases of {total} fail)",
            len(failed),
            lang=lang,
            phrase=phrase,
            case=case,
            total=len(group),
        )
    hint = lab.hint(x.hint, lang)
    line = f"  ✗ {pad(title, title_w)}  {pts}  {phrase}".rstrip()
    if not hint:
        return line
    if lang == "zh":  # a Chinese sentence closes with 。 before the hint begins; no dash, no ASCII colon
        end = phrase.rstrip()[-1:]
        sep = "  " if not end else ("" if end in "。！？；…）」" else "。")
        return line + sep + f"{t('hint', lang)}：{hint}"
    return line + f" — {t('hint', lang)}: {hint}"


def _verbose_lines(group: list[TestResult]) -> list[str]:
    out = []
    for x in group:
        if x.passed or x.outcome == "skipped":
            continue
        lines = (x.message or "").strip().splitlines()
        if len(group) > 1:  # every case, by name
            out += [f"      {x.name}:"] + [f"        {ln}" for ln in lines]
        else:  # the first line is on the test's line already
            out += [f"      {ln}" for ln in lines[1:]]
    return out


def render_lab(
    lab: Lab,
    res: LabResult,
    lang: str = "en",
    *,
    verbose: bool = False,
    brief: bool = False,
    source: Path | None = None,
) -> list[str]:
    """The lines of one lab: a head line, then one line per test (or one line for the whole lab when
    it could not be imported, or, with ``brief``, when nothing in it is written yet)."""
    head = f"{lab.id}  {lab.title(lang)}"
    score = f"{fmt_points(res.points)}/{fmt_points(res.max_points)}"
    if res.status == "missing":
        return [f"{head}  —", f"  ✗ {t('missing', lang)}"]
    if res.status == "import-error":
        first, *rest = import_failure(res.message, lang)
        n = len(res.tests)
        out = [f"{head}  {score}", f"  ✗ {first}"] + [f"    {ln}" for ln in syntax_error_lines(source)]
        out += [
            "    "
            + ngettext(
                "No test ran ({n} test waits): fix this line first.",
                "No test ran ({n} tests wait): fix this line first.",
                n,
                lang=lang,
            )
        ]
        return out + ([f"    {ln}" for ln in rest] if verbose else [])
    if res.status == "grader-error" or not res.tests:
        note = (res.message or "").strip().splitlines()
        out = [
            f"{head}  —",
            f"  ✗ {t(res.status if res.status != 'ok' else 'skipped', lang)}" + (f": {note[0]}" if note else ""),
        ]
        return out + ([f"    {ln}" for ln in note[1:]] if verbose else [])
    groups = _groups(res.tests)
    failing = [g for g in groups if any(not x.passed and x.outcome != "skipped" for x in g)]
    if (
        brief
        and failing
        and len(failing) == len(groups)
        and all(x.event == NOT_STARTED for g in groups for x in g if not x.passed)
    ):
        return [
            f"{head}  {score}",
            "  ✗ "
            + _(
                "not started: every test fails because the functions still raise "
                "NotImplementedError. Run `python3 run.py check {number}` to "
                "see them one by one.",
                lang=lang,
                number=lab.number,
            ),
        ]
    title_w = max(width(lab.test_title(g[0].name.split("[")[0], lang)) for g in groups)
    out = [f"{head}  {score}"]
    said = (
        bool(failing)
        and len(failing) == len(groups)
        and not verbose
        and all(x.event == NOT_STARTED for g in groups for x in g if not x.passed)
    )
    environment = _environment_error(failing) if len(failing) == len(groups) and not verbose else None
    if said:  # an untouched starter: say it once, then each test with its hint
        out.append(
            "  "
            + _(
                "Nothing is written yet: every function still raises NotImplementedError. "
                "Start with the first test; its hint says how.",
                lang=lang,
            )
        )
    elif environment:  # Redis unreachable or REDIS_URL wrong: the same sentence for every test, once and whole
        out.append(f"  ✗ {environment}")
        said = True
    for g in groups:
        out.append(test_line(lab, g, lang, title_w, said=said))
        if verbose:
            out += _verbose_lines(g)
    if verbose and res.output.strip():
        out += [f"  {t('your_output', lang)}:"] + [f"    {ln}" for ln in res.output.strip()[-1500:].splitlines()]
    return out


def render(
    results: list[tuple[Lab, LabResult]],
    lang: str = "en",
    *,
    verbose: bool = False,
    sources: dict[str, Path] | None = None,
) -> str:
    """The whole check: each lab, then the total and how many tests fail (``sources``: lab id -> the
    file checked, to show the line of a syntax error)."""
    brief = len(results) > 1 and not verbose
    out: list[str] = []
    for lab, res in results:
        if out:
            out.append("")
        out += render_lab(lab, res, lang, verbose=verbose, brief=brief, source=(sources or {}).get(lab.id))
    total = sum(r.points for _, r in results)
    max_total = sum(r.max_points for _, r in results)
    failing = sum(
        1
        for _, r in results
        if r.status not in ("import-error", "missing")
        for g in _groups(r.tests)
        if any(not x.passed and x.outcome != "skipped" for x in g)
    )
    unloaded = sum(1 for _, r in results if r.status in ("import-error", "missing"))
    out += [
        "",
        f"{t('total', lang)}  {fmt_points(total)}/{fmt_points(max_total)}"
        + ("  " + ngettext("({n} test fails)", "({n} tests fail)", failing, lang=lang) if failing else "")
        + (
            "  " + ngettext("({n} lab could not be imported)", "({n} labs could not be imported)", unloaded, lang=lang)
            if unloaded
            else ""
        ),
    ]
    return "\n".join(out)


def _check_labs(labs, url, backend, lang, source, limits, results, sources, notes) -> None:
    for lab in labs:
        if url:
            refusal = url_refusal(lab, url, lang)
            if refusal:
                notes.append(refusal)
                continue
            lab_backend = backend
        else:
            lab_backend, note = backend_for(lab, backend, lang)
            if note:
                notes.append(note)
                if lab_backend != "fakeredis":
                    continue
        file = source if source is not None else lab.student_file
        sources[lab.id] = file
        lim = limits or Limits(call_timeout_s=lab.timeout_s, lab_budget_s=lab.budget_s)
        results.append((lab, run_lab(lab, file, visibility=("public",), backend=lab_backend, url=url, limits=lim)))


def run_check(
    lab_spec: str | None = None,
    *,
    lang: str = "en",
    backend: str = "auto",
    source: Path | None = None,
    root: Path | None = None,
    limits: Limits | None = None,
    url: str | None = None,
    verbose: bool = False,
) -> tuple[list[tuple[Lab, LabResult]], str]:
    labs = [find_lab(lab_spec, root)] if lab_spec else discover(root)
    if url is None:
        url = os.environ.get("REDIS_URL") or None
    results, sources, notes = [], {}, []
    from ..engine.zygote import zygote

    with zygote():  # every lab's grader forked from one zygote
        _check_labs(labs, url, backend, lang, source, limits, results, sources, notes)
    # what the student's code said is shown as text: no escape sequence, control or bidi character of its
    # own reaches the terminal of whoever runs check (a student, or an instructor on their machine)
    table = plain_text(render(results, lang, verbose=verbose, sources=sources)) if results else ""
    return results, "\n".join([*notes, *([table] if table else [])])


def main(
    lab_spec: str | None, lang: str, backend: str = "auto", source: Path | None = None, verbose: bool = False
) -> int:
    results, table = run_check(lab_spec, lang=lang, backend=backend, source=source, verbose=verbose)

    from ...core.backend import _describe_url

    def shown(name: str) -> str:  # "url" means the server in REDIS_URL, under a fresh key prefix
        url = os.environ.get("REDIS_URL")
        return f"REDIS_URL ({_describe_url(url)})" if name == "url" and url else name

    backends = sorted({shown(r.backend) for _, r in results if r.backend})
    print(table)
    if backends:
        print(f"{t('backend', lang)}{'：' if lang == 'zh' else ': '}{', '.join(backends)}")
    skipped = len(results) < (1 if lab_spec else len(discover()))  # a lab this Redis is too old for
    ok = bool(results) and not skipped and all(r.status == "ok" and r.points == r.max_points for _, r in results)
    if not results:
        return 1
    if ok:
        print(t("all_passed", lang))
    elif all(r.status in ("import-error", "missing") for _, r in results if r.points < r.max_points):
        print(_("Fix what stops lab.py from loading, then run the check again.", lang=lang))
    else:
        more = "" if verbose else ("" if lang == "zh" else " ") + _("`--verbose` shows every detail.", lang=lang)
        print(t("some_failed", lang) + more)
    return 0 if ok else 1
