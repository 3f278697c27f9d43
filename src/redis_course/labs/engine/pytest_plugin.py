"""The pytest plugin of lab tests, loaded explicitly by the grader: ``-p redis_course.labs.engine.pytest_plugin``.

PYTEST_DONT_REWRITE: imported by the zygote (:mod:`.zygote`) before pytest starts, so never rewritten.

It reads the run's settings from the JSON file named by ``COURSE_LAB_RUN`` (written by
:mod:`.runner`), starts the run's private Redis, provides the fixtures ``lab``, ``redis``, ``box`` and ``traffic``, the
markers ``points``, ``hint`` and ``real_redis``, and writes every test's outcome and points to the
results file.  The tests come from the trusted repository; the submission's folder is never on
pytest's path, so no conftest.py or plugin from a submission can load.
"""

from __future__ import annotations

import copy
import json
import os
import re
import secrets
import signal
import time
from pathlib import Path

import pytest

from ...l10n import _
from ..sandbox.errors import StudentCrash, StudentError, StudentImportError, StudentTimeout
from .proxy import LabProxy
from ..sandbox.box import Box
from ..sandbox import ENV_ISOLATION
from ..sandbox.limits import Limits, new_budgets
from ..sandbox.process import StudentProcess

ENV_RUN = "COURSE_LAB_RUN"


class LabRun:
    """Everything one grading run of one lab shares: its box (the student's processes, their Redis,
    the fault proxy), the student's source, the results."""

    def __init__(self, cfg: dict) -> None:
        self.cfg = cfg
        self.lab_dir = Path(cfg["lab_dir"])
        self.limits = Limits(**cfg.get("limits", {}))
        self.run_dir = Path(cfg["run_dir"])
        self.prefix = cfg.get("prefix") or f"course:{secrets.token_hex(4)}:"
        self.source = Path(cfg["source_file"]).read_bytes()
        self.results_path = Path(cfg["results"])
        self.variants: list[dict] = cfg.get("variants") or []  # files the course wrote, graded one by one
        self._blank: dict[str, dict] = {}  # the records before any test ran
        self.url = cfg.get("url") or ""
        self.backend = cfg.get("backend", "auto")
        self.box: Box | None = None
        self.processes: list[StudentProcess] = []
        self.records: dict[str, dict] = {}
        self.order: list[str] = []
        self.proxy: LabProxy | None = None
        self.first: StudentProcess | None = None  # the run's first process: its import decides import-error
        self._client = None
        self._fresh_for: str | None = None
        self.started = time.monotonic()

    @property
    def server(self):
        """The box's Redis server (None with a Redis the course does not own)."""
        return self.box.redis if self.box is not None else None

    def start(self) -> None:
        from ..authoring.model import load_lab

        cluster = load_lab(self.lab_dir).redis_mode == "cluster"
        external = self.url if self.backend == "url" else None
        self.box = Box(
            self.source,
            self.run_dir,
            self.prefix,
            self.limits,
            backend=self.backend,
            cluster=cluster,
            mode=os.environ.get(ENV_ISOLATION) or None,
            hide=tuple(self.cfg.get("hide", ())),
            url=external,
        )
        self.box.start()
        if self.server is not None:
            self.backend = self.server.backend
        signal.signal(signal.SIGTERM, self._terminated)
        self.proxy = LabProxy(self.new_process)
        self.first = self.proxy._proc()
        self.first.spawn()  # the student's process starts while pytest collects

    def switch(self, variant: dict) -> None:
        """The next file of a variants run: the box emptied as between two tests and its source in
        place (:meth:`..sandbox.box.Box.replace_source`), its own budget and records; the server is
        reset before its first test as before every test."""
        for proc in self.processes:
            proc.kill()
        self.processes = []
        self.source = Path(variant["source_file"]).read_bytes()
        self.results_path = Path(variant["results"])
        self.records = copy.deepcopy(self._blank)
        new_budgets()
        self.box.replace_source(self.source)
        self.proxy = LabProxy(self.new_process)
        self.first = self.proxy._proc()
        self.first.spawn()
        self._fresh_for = None  # the next test finds the process it needs already started

    def failed(self) -> bool:
        return any(r["outcome"] in ("failed", "error") for r in self.records.values())

    def _terminated(self, *_: object) -> None:
        """The runner's wall time ran out: stop every student process before going."""
        self.close()
        os._exit(143)

    def new_process(self) -> StudentProcess:
        proc = StudentProcess(self.box, self.limits)
        self.processes.append(proc)
        return proc

    def task(self) -> StudentProcess:
        """A process of the box that runs the grader's tasks (:mod:`..sandbox.tasks`), not student code."""
        proc = StudentProcess(self.box, self.limits, task=True)
        self.processes.append(proc)
        return proc

    def client(self):
        from ...core.backend import connect

        if self.server is not None:
            return self.server.client(self.prefix)
        return connect(self.url, prefix=self.prefix, socket_timeout=5)

    def fresh_test(self, nodeid: str) -> None:
        """Once per test: no process, file, fault or key of the previous test is left (the box reaped,
        the server reset), and the test's ``lab`` is a fresh process."""
        if self._fresh_for == nodeid:
            return
        first = self._fresh_for is None
        self._fresh_for = nodeid
        if first and self.server is None and self._client is None:
            self._client = self.client()
        if not first:
            for proc in self.processes:
                proc.kill()
            self.processes = []
            self.box.reap()
            self.proxy = LabProxy(self.new_process)
            self.proxy._proc().spawn()
        if self.server is not None:
            self.server.reset()
        if self._client is None:
            self._client = self.client()
        if self.server is None:
            self._client.cleanup()

    def fresh_redis(self):
        """The grader's client on a clean, healthy Redis (restarted if the student broke it)."""
        return self._client

    @property
    def is_fake(self) -> bool:
        return self.backend == "fakeredis"

    def write(self) -> None:
        import_error = None
        if self.first is not None and self.first.import_failure is not None:
            import_error = self.first.import_failure.detail
        data = {
            "lab": self.lab_dir.name,
            "backend": self.backend,
            "import_error": import_error,
            "isolation": self.box.mode if self.box is not None else "",
            "output": self.first.output_tail() if self.first is not None else "",
            "tests": [self.records[n] for n in self.order],
        }
        tmp = self.results_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(self.results_path)

    def close(self) -> None:
        for proc in self.processes:
            proc.kill()
        if self.box is not None:
            if self.server is None and self.url:  # a server the course does not own: none of this run's keys stay
                try:
                    (self._client or self.client()).cleanup()
                except Exception:  # noqa: BLE001 - the run's result is already written
                    pass
            self.box.stop()


_run: LabRun | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _run
    config.addinivalue_line("markers", "points(n): the test is worth n points")
    config.addinivalue_line("markers", "hint(id): the hint (hints.yml) shown when the test fails")
    config.addinivalue_line("markers", "real_redis: needs a real Redis server; skipped on fakeredis")
    config.addinivalue_line("markers", "contract(*ids): the lab's contract items the test checks")
    path = os.environ.get(ENV_RUN)
    if path and _run is None:
        cfg = json.loads(Path(path).read_text(encoding="utf-8"))
        _die_with(os.environ.get("COURSE_LAB_PARENT"))
        _run = LabRun(cfg)
        if _run.variants:
            _find_without_shrinking()
        _run.start()


VARIANTS_PROFILE = "course-variants"


def _find_without_shrinking() -> None:
    """Hypothesis for a variants run: the same examples, without the shrink and explain phases.

    A known-wrong file has only to fail its test; whether it fails is settled by the first failing
    example (Hypothesis replays it, and one that does not fail again is reported as flaky, an error),
    so the smallest example, which a student's report needs, changes no outcome here.  Shrinking was
    most of a variants run's time: 7-11 s of a failing model test against 5 s of a passing one.  Set
    before the tests are collected, so every ``settings(...)`` they make inherits it."""
    from hypothesis import Phase, settings

    phases = tuple(p for p in settings.default.phases if p not in (Phase.shrink, Phase.explain))
    settings.register_profile(VARIANTS_PROFILE, parent=settings.default, phases=phases)
    settings.load_profile(VARIANTS_PROFILE)


def _die_with(parent: str | None) -> None:
    """The grading process is killed (SIGKILL: no handler of its own needs to run; its boxes die with
    it) when the process that started it ends: the zygote, or the runner itself
    (``COURSE_LAB_PARENT``)."""
    if not parent:
        return
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    if str(os.getppid()) != parent:
        os._exit(137)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _run
    if _run is not None:
        _run.write()
        _run.close()
        _run = None


def _visibility(item: pytest.Item) -> str:
    return "hidden" if "hidden" in Path(str(item.fspath)).parts else "public"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if _run is None:
        return
    for item in items:
        pts = item.get_closest_marker("points")
        hint = item.get_closest_marker("hint")
        name = item.name
        _run.order.append(item.nodeid)
        _run.records[item.nodeid] = {
            "name": name,
            "visibility": _visibility(item),
            "max_points": float(pts.args[0]) if pts and pts.args else 0.0,
            "points": 0.0,
            "hint": hint.args[0] if hint and hint.args else None,
            "outcome": "not-run",
            "message": "",
            "event": None,
            "duration": 0.0,
        }
        if item.get_closest_marker("real_redis") and _run.is_fake:
            item.add_marker(pytest.mark.skip(reason="needs a real Redis server"))
    _run._blank = copy.deepcopy(_run.records)
    _run.write()


def _first(items: list[pytest.Item], names) -> list[pytest.Item]:
    """``items`` with the tests of the given function names first (otherwise in their order)."""
    names = set(names or ())
    return sorted(items, key=lambda item: getattr(item, "originalname", item.name) not in names)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session):
    """A variants run (:func:`..runner.run_variants`): the collected tests once per file, each file in
    the box emptied as between two tests, stopping at that file's first failure, its results in its
    own file."""
    if _run is None or not _run.variants or session.testsfailed or session.config.option.collectonly:
        return None
    for i, variant in enumerate(_run.variants):
        if i:
            _run.switch(variant)
        order = _first(session.items, variant.get("first_tests"))
        for j, item in enumerate(order):
            nextitem = order[j + 1] if j + 1 < len(order) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if _run.failed():
                if nextitem is not None:
                    session._setupstate.teardown_exact(None)  # module fixtures end with the file
                break
        _run.write()
    return True


@pytest.fixture
def lab(request) -> LabProxy:
    if _run is None or _run.proxy is None:
        pytest.fail("the lab fixture needs the grader (run `course check`)", pytrace=False)
    _run.fresh_test(request.node.nodeid)
    return _run.proxy


@pytest.fixture
def redis(request):
    if _run is None:
        pytest.fail("the redis fixture needs the grader (run `course check`)", pytrace=False)
    _run.fresh_test(request.node.nodeid)
    yield _run.fresh_redis()


@pytest.fixture
def box(request):
    """The grader's tasks inside the box (lab 05's ledger): ``box.ledger_create()``,
    ``box.ledger_total(path, name)``, ``box.ledger_lock(path)`` / ``box.ledger_unlock(path)``."""
    if _run is None:
        pytest.fail("the box fixture needs the grader (run `course check`)", pytrace=False)
    _run.fresh_test(request.node.nodeid)
    return LabProxy(_run.task)


@pytest.fixture
def traffic(request):
    """``traffic(lab)``: what the process behind ``lab`` (or a proxy of ``lab.parallel``) has sent to
    Redis since it started, counted outside it by the box's fault proxy: ``{"connections": n,
    "round_trips": n, "commands": {"MGET": n, ...}, "units": n, "by_command": {...}}`` (the same as
    ``lab.traffic()``).  Take the difference around the calls a cost promise is about (one MGET,
    one round trip, one connection per process).  Skips the test where the grader has no proxy in
    front of Redis (a check against REDIS_URL)."""
    if _run is None:
        pytest.fail("the traffic fixture needs the grader (run `course check`)", pytrace=False)
    _run.fresh_test(request.node.nodeid)
    return lambda proxy: proxy.traffic()


_compared: list[tuple[str, object, object]] = []  # the failing comparison of the running test


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: object, right: object) -> None:
    """Remember what a failing ``assert left <op> right`` compared; pytest's own explanation stays."""
    _compared.append((op, left, right))


def pytest_runtest_setup(item: pytest.Item) -> None:
    _compared.clear()


def _short(value: object, n: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"


def _not_written(exc: StudentError) -> bool:
    return exc.type == "NotImplementedError"


def _student_errors(frame_locals: dict) -> list[StudentError]:
    """StudentErrors a test kept in its variables (``errors = [r for r in results if ...]``)."""
    found = []
    for value in frame_locals.values():
        items = (
            value
            if isinstance(value, (list, tuple, set))
            else list(value.values())
            if isinstance(value, dict)
            else [value]
        )
        found += [x for x in list(items)[:1000] if isinstance(x, StudentError)]
    return found


def _assertion_source(excinfo) -> str | None:
    """The failing ``assert`` statement's expression being compared, as written in the test."""
    import ast

    try:
        entry = excinfo.traceback[-1]
        source = str(entry.statement).strip()
        node = ast.parse(source).body[0]
    except Exception:  # noqa: BLE001 - a multi-line statement or no source: no expression then
        return None
    if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
        expr = ast.get_source_segment(source, node.test.left) or ""
        return re.sub(r"^lab\.", "", expr)
    return None


def _student_traceback(exc: StudentError) -> list[str]:
    """The student's lines the error went through (``line 14, in count_view: return ...``), for --verbose."""
    return [ln for ln in exc.traceback.strip().splitlines() if ln.strip()][-6:]


def _describe(exc: BaseException, excinfo=None) -> tuple[str, str | None]:
    """What went wrong in one phrase (the first line), then details for ``--verbose``; and the event
    kind (timeout, crash, import-error, not-implemented).  Words in the student's language; no pytest
    internals (``assert not [StudentError(...)]``)."""
    if isinstance(exc, StudentImportError):
        return _("lab.py could not be imported: {detail}", detail=exc.detail), "import-error"
    if isinstance(exc, StudentTimeout):
        return _(
            "{function}() did not finish within {seconds} s.", function=exc.function, seconds=format(exc.seconds, "g")
        ), "timeout"
    if isinstance(exc, StudentCrash):
        return _("{function}() ended its process: {detail}", function=exc.function, detail=exc.detail), "crash"
    if isinstance(exc, StudentError):
        if _not_written(exc):
            return _(
                "{function}() is not written yet (it raises NotImplementedError).", function=exc.function
            ), "not-implemented"
        where = exc.traceback.strip().splitlines()
        loc = f" ({where[-1].split(':')[0].strip()})" if where else ""
        head = (
            _("{function}() raised {type}: {message}", function=exc.function, type=exc.type, message=exc.message[:200])
            + loc
        )
        return "\n".join([head] + _student_traceback(exc)), None
    if isinstance(exc, AssertionError):
        return _describe_assertion(exc, excinfo)
    return f"{type(exc).__name__}: {str(exc)[:300]}", None


def _describe_assertion(exc: AssertionError, excinfo=None) -> tuple[str, str | None]:
    """A failed check: the test's own message, else the StudentError it kept, else what ``==``
    compared (expected / got), else the check's source line."""
    text = str(exc).strip()
    kept = None
    if excinfo is not None:
        try:
            kept = _student_errors(excinfo.traceback[-1].frame.f_locals)
        except Exception:  # noqa: BLE001
            kept = None
    cause = exc.__cause__ or exc.__context__  # raise AssertionError(...) from None inside except StudentError
    if isinstance(cause, StudentError):
        kept = [cause] + (kept or [])
    if kept and all(_not_written(e) for e in kept):
        return _(
            "{function}() is not written yet (it raises NotImplementedError).", function=kept[0].function
        ), "not-implemented"
    message, sep, _explanation = text.partition("\nassert ")
    if sep or not text.startswith("assert "):  # the test's own message
        lines = [ln[:300] for ln in message.strip().splitlines()] or [_("a check failed")]
        return "\n".join(lines[:5]), None
    if kept:
        e = kept[0]
        return _(
            "{function}() raised {type}: {message}", function=e.function, type=e.type, message=e.message[:200]
        ), None
    expr = _assertion_source(excinfo) if excinfo is not None else None
    if _compared and _compared[-1][0] == "==":
        _op, left, right = _compared[-1]
        if expr:
            return _(
                "{expr}: expected {expected}, got {seen}", expr=expr, expected=_short(right), seen=_short(left)
            ), None
        return _("expected {expected}, got {seen}", expected=_short(right), seen=_short(left)), None
    if _compared:
        op, left, right = _compared[-1]
        return _("expected {left} {op} {right}, which is false", left=_short(left), op=op, right=_short(right)), None
    first = text.splitlines()[0][len("assert ") :]
    errors = re.findall(r"Student\w+\('((?:[^'\\]|\\.)*)'", first)
    if errors:  # the repr of a kept StudentError is pytest's, not the student's: keep its text only
        first = "; ".join(errors)
    elif re.search(r"<[\w.]+ (object )?at 0x|<[\w.]+Proxy", first):
        return _("a check failed"), None
    return _("this check failed: {check}", check=first[:200]), None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if _run is None or item.nodeid not in _run.records:
        return
    rec = _run.records[item.nodeid]
    rec["duration"] = round(rec["duration"] + report.duration, 4)
    if report.skipped and rec["outcome"] in ("not-run", "passed"):
        rec["outcome"] = "skipped"
        rec["message"] = str(report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped")
    elif report.failed:
        rec["outcome"] = "failed" if report.when == "call" else "error"
        rec["points"] = 0.0
        if call.excinfo is not None and not rec["message"]:
            rec["message"], rec["event"] = _describe(call.excinfo.value, call.excinfo)
    elif report.passed and report.when == "call" and rec["outcome"] == "not-run":
        rec["outcome"] = "passed"
        rec["points"] = rec["max_points"]
    if report.when == "teardown":
        _run.write()
