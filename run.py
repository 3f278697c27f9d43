#!/usr/bin/env python3
"""Set up the course in ./.venv from the lock files, then run a `course` command.

    python3 run.py serve      the site at http://127.0.0.1:8000 (installs only what the site needs)
    python3 run.py test       the whole test suite (installs everything the course locks)
    python3 run.py lock       refresh requirements/*.txt from pyproject.toml (--upgrade: newest allowed)
    python3 run.py <command>  any other `course` command: doctor, check, jupyter, i18n, release, grade ...

Installs use exactly the versions in requirements/site.txt (serve, build) or requirements/all.txt
(everything else), with uv when it can be had from the package index and pip otherwise.  Only the
standard library is used here, so this works on a machine that has nothing but python3 and git.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
import venv
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".course-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
UV_HOME = VENV / ".uv"  # uv itself, outside the synced environment so that a sync never removes it
LOCKS = ROOT / "requirements"
LOCK = {"site": LOCKS / "site.txt", "all": LOCKS / "all.txt"}
EXTRAS = {"site": [], "all": ["course", "dev"]}
BINDER_REQS = ROOT / "binder" / "requirements.txt"
SITE_COMMANDS = {"serve", "build"}  # the site is rendered from stored notebook outputs: no kernel, no fakeredis
HEARTBEAT = 5.0  # seconds of silence after which a long step says it is still working

# What a student meets while the course sets itself up, in Russian and Chinese (the rest of the course
# speaks through its gettext catalogs, which are not installed yet at this point).  The language is
# COURSE_LANG's, then the student edition's (edition.json), then the locale's, as for every command.
TEXTS = {
    "ru": {
        "creating a virtual environment in {folder}/": "создаю виртуальное окружение в {folder}/",
        "uv could not be installed; pip installs the packages instead (slower)": "uv установить не удалось; пакеты установит pip (медленнее)",
        "uv could not install the packages; pip tries instead (COURSE_INSTALLER=pip skips uv)": "uv не смог установить пакеты; пробует pip (с COURSE_INSTALLER=pip uv не используется)",
        "installing {what} from requirements/{which}.txt with {tool}": "устанавливаю {what} из requirements/{which}.txt через {tool}",
        "what the site needs": "то, что нужно сайту",
        "the course and its tools": "курс и его инструменты",
        "set up in {s} s": "всё установлено за {s} с",
        "{what}: done in {s} s": "{what}: готово за {s} с",
        "{what}: failed in {s} s": "{what}: ошибка через {s} с",
        "... {what}: {s} s": "... {what}: {s} с",
        "bootstrapping pip": "устанавливаю pip",
        "installing uv (a fast installer)": "устанавливаю uv (быстрый установщик)",
        "installing the packages in {lock}": "устанавливаю пакеты из {lock}",
        "installing the course itself": "устанавливаю сам курс",
        "Python cannot install packages here: it has no pip. On Debian or Ubuntu run "
        "`sudo apt install python3-venv python3-pip`, then run this command again.": "Python не может здесь устанавливать пакеты: у него нет pip. В Debian или Ubuntu выполните "
        "`sudo apt install python3-venv python3-pip` и запустите эту команду снова.",
        "Python cannot create a virtual environment in {venv} ({exc}). On Debian or Ubuntu run "
        "`sudo apt install python3-venv`, then run this command again.": "Python не может создать виртуальное окружение в {venv} ({exc}). В Debian или Ubuntu выполните "
        "`sudo apt install python3-venv` и запустите эту команду снова.",
        "installing the course's Python packages failed (see the output above). "
        "Check the network connection to the package index and run the command again.": "установить Python-пакеты курса не удалось (вывод выше). Проверьте подключение к каталогу "
        "пакетов и запустите команду снова.",
        "the course needs Python 3.11 or newer; this is {version}.": "курсу нужен Python 3.11 или новее, а здесь {version}.",
    },
    "zh": {
        "creating a virtual environment in {folder}/": "正在 {folder}/ 中创建虚拟环境",
        "uv could not be installed; pip installs the packages instead (slower)": "无法安装 uv；改用 pip 安装软件包（更慢）",
        "uv could not install the packages; pip tries instead (COURSE_INSTALLER=pip skips uv)": "uv 无法安装软件包；改用 pip 尝试（设置 COURSE_INSTALLER=pip 可跳过 uv）",
        "installing {what} from requirements/{which}.txt with {tool}": "正在用 {tool} 从 requirements/{which}.txt 安装{what}",
        "what the site needs": "网站所需的软件包",
        "the course and its tools": "课程及其工具",
        "set up in {s} s": "安装完成，用时 {s} 秒",
        "{what}: done in {s} s": "{what}：完成，用时 {s} 秒",
        "{what}: failed in {s} s": "{what}：失败，用时 {s} 秒",
        "... {what}: {s} s": "……{what}：{s} 秒",
        "bootstrapping pip": "安装 pip",
        "installing uv (a fast installer)": "安装 uv（一个快速的安装工具）",
        "installing the packages in {lock}": "安装 {lock} 中的软件包",
        "installing the course itself": "安装课程本身",
        "Python cannot install packages here: it has no pip. On Debian or Ubuntu run "
        "`sudo apt install python3-venv python3-pip`, then run this command again.": "这里的 Python 无法安装软件包：它没有 pip。在 Debian 或 Ubuntu 上运行 "
        "`sudo apt install python3-venv python3-pip`，然后重新运行此命令。",
        "Python cannot create a virtual environment in {venv} ({exc}). On Debian or Ubuntu run "
        "`sudo apt install python3-venv`, then run this command again.": "Python 无法在 {venv} 中创建虚拟环境（{exc}）。在 Debian 或 Ubuntu 上运行 "
        "`sudo apt install python3-venv`，然后重新运行此命令。",
        "installing the course's Python packages failed (see the output above). "
        "Check the network connection to the package index and run the command again.": "安装课程的 Python 软件包失败（见上面的输出）。请检查到软件包索引的网络连接，然后重新运行命令。",
        "the course needs Python 3.11 or newer; this is {version}.": "课程需要 Python 3.11 或更高版本；当前是 {version}。",
    },
}


def _lang() -> str:
    wanted = os.environ.get("COURSE_LANG", "").strip().lower()
    if not wanted:
        try:
            wanted = str(json.loads((ROOT / "edition.json").read_text(encoding="utf-8")).get("lang") or "")
        except (OSError, ValueError, AttributeError):
            wanted = ""
    if not wanted:
        import locale

        try:
            wanted = (locale.getlocale()[0] or "").lower()
        except ValueError:
            wanted = ""
    return next((lang for lang in TEXTS if wanted.startswith(lang)), "en")


def _t(message: str, **fields: object) -> str:
    """``message`` in the reader's language (English when it has no translation), filled with ``fields``."""
    return TEXTS.get(_lang(), {}).get(message, message).format(**fields)


def _say(msg: str) -> None:
    print(f"[course] {msg}", flush=True)


def _fail(msg: str) -> NoReturn:
    print(f"[course] {msg}", file=sys.stderr, flush=True)
    raise SystemExit(2)


# ------------------------------------------------------------------ steps, visibly


def _run(cmd: list[str], what: str, env: dict | None = None) -> bool:
    """Run one installer step with its own output shown; every 5 s of silence say it is still working.

    The installers (pip, uv) speak English: a Russian or Chinese reader gets only the course's own
    lines, and the installer's output only when the step fails (``COURSE_VERBOSE=1`` shows it always)."""
    hold = _lang() != "en" and not os.environ.get("COURSE_VERBOSE")
    held: list[str] = []
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(c) for c in cmd], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    last = [time.monotonic()]
    done = threading.Event()

    def heartbeat() -> None:
        while not done.wait(1.0):
            if time.monotonic() - last[0] >= HEARTBEAT:
                _say(_t("... {what}: {s} s", what=what, s=f"{time.monotonic() - started:.0f}"))
                last[0] = time.monotonic()

    threading.Thread(target=heartbeat, daemon=True).start()
    assert proc.stdout is not None
    for line in proc.stdout:
        if hold:
            held.append("    " + line.rstrip())
            continue
        print("    " + line.rstrip(), flush=True)
        last[0] = time.monotonic()
    code = proc.wait()
    done.set()
    if code != 0 and held:
        print("\n".join(held), flush=True)
    _say(
        _t(
            "{what}: done in {s} s" if code == 0 else "{what}: failed in {s} s",
            what=what,
            s=f"{time.monotonic() - started:.1f}",
        )
    )
    return code == 0


def _system_pip() -> list[str] | None:
    ok = (
        subprocess.call(
            [sys.executable, "-m", "pip", "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        == 0
    )
    return [sys.executable, "-m", "pip", "--disable-pip-version-check"] if ok else None


def _venv_pip() -> list[str]:
    """pip for the course's venv: the system's (pointed at the venv) or pip bootstrapped into it."""
    system = _system_pip()
    if system:
        return [*system, "--python", str(PYTHON)]
    if (
        subprocess.call([str(PYTHON), "-m", "pip", "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        != 0
    ):
        if not _run([PYTHON, "-m", "ensurepip", "--default-pip"], _t("bootstrapping pip")):
            _fail(
                _t(
                    "Python cannot install packages here: it has no pip. On Debian or Ubuntu run "
                    "`sudo apt install python3-venv python3-pip`, then run this command again."
                )
            )
    return [str(PYTHON), "-m", "pip", "--disable-pip-version-check"]


def _make_venv() -> None:
    _say(_t("creating a virtual environment in {folder}/", folder=VENV.name))
    try:
        venv.EnvBuilder(with_pip=False).create(VENV)
    except OSError as exc:
        _fail(
            _t(
                "Python cannot create a virtual environment in {venv} ({exc}). On Debian or Ubuntu run "
                "`sudo apt install python3-venv`, then run this command again.",
                venv=VENV,
                exc=exc,
            )
        )


def _uv() -> str | None:
    """uv: on PATH, already in .venv/.uv, or installed there from the package index; None if it cannot be had."""
    if os.environ.get("COURSE_INSTALLER") == "pip":
        return None
    mine = UV_HOME / "bin" / ("uv.exe" if os.name == "nt" else "uv")
    found = shutil.which("uv") or (str(mine) if mine.exists() else None)
    if found:
        return found
    if (
        _run([*_venv_pip(), "install", "--target", UV_HOME, "uv"], _t("installing uv (a fast installer)"))
        and mine.exists()
    ):
        return str(mine)
    _say(_t("uv could not be installed; pip installs the packages instead (slower)"))
    return None


# ------------------------------------------------------------------ locks


def deps_digest() -> str:
    """What the locks are made from: the dependency lists in pyproject.toml (not its comments)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {
        "dependencies": project.get("dependencies", []),
        "optional": project.get("optional-dependencies", {}),
        "python": project.get("requires-python"),
    }
    return hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:16]


def _lock_digest(path: Path) -> str | None:
    if not path.exists():
        return None
    for line in path.read_text(encoding="utf-8").splitlines()[:5]:
        if line.startswith("# pyproject-deps: "):
            return line.split(": ", 1)[1].strip()
    return None


def locks_fresh() -> bool:
    return all(_lock_digest(p) == deps_digest() for p in LOCK.values())


def write_locks(uv: str, upgrade: bool = False) -> None:
    """requirements/all.txt (everything), then requirements/site.txt constrained to the same versions,
    then binder/requirements.txt (what a Binder image needs) from all.txt."""
    LOCKS.mkdir(exist_ok=True)
    header = f"# pyproject-deps: {deps_digest()}\n# Refresh with `python3 run.py lock`; do not edit by hand.\n"
    for name in ("all", "site"):
        cmd = [
            uv,
            "pip",
            "compile",
            "pyproject.toml",
            "--universal",
            "--python-version",
            "3.11",
            "--quiet",
            "--no-header",
            "--custom-compile-command",
            "python3 run.py lock",
            "-o",
            LOCK[name],
        ]
        cmd += [a for extra in EXTRAS[name] for a in ("--extra", extra)]
        cmd += ["--upgrade"] if upgrade and name == "all" else []
        cmd += ["-c", LOCK["all"]] if name == "site" else []
        if not _run(cmd, f"resolving requirements/{name}.txt"):
            _fail("resolving the dependencies failed (see above).")
        body = LOCK[name].read_text(encoding="utf-8")
        body = "\n".join(
            line
            for line in body.splitlines()
            if not line.startswith("# pyproject-deps: ") and not line.startswith("# Refresh with")
        )
        LOCK[name].write_text(header + body.lstrip("\n") + "\n", encoding="utf-8")
    write_binder_requirements()


def write_binder_requirements() -> None:
    """binder/requirements.txt: the locked versions without the [dev] tools (binder/postBuild installs
    the course itself)."""
    pins = [
        line
        for line in LOCK["all"].read_text(encoding="utf-8").splitlines()
        if line and not line.startswith((" ", "#"))
    ]
    dev_only = {
        "playwright",
        "pytest-xdist",
        "limits",
        "throttled-py",
        "pyrate-limiter",
        "execnet",
        "greenlet",
        "pyee",
        "pygiftparser",
        "markdownsuperscript",
        "yattag",
        "deprecated",
        "wrapt",
        "import-linter",
        "grimp",
        "ruff",
        "rich",
    }
    pins = [p for p in pins if p.split("==")[0].split("[")[0].lower() not in dev_only]
    BINDER_REQS.parent.mkdir(exist_ok=True)
    BINDER_REQS.write_text(
        "# Generated by `python3 run.py lock` from requirements/all.txt: the versions the course "
        "is tested with.\n" + "\n".join(pins) + "\n",
        encoding="utf-8",
    )


def cmd_lock(args: list[str]) -> int:
    if not (BIN / "python").exists():
        _make_venv()
    uv = _uv()
    if not uv:
        _fail("refreshing the locks needs uv, and it could not be installed.")
    write_locks(uv, upgrade="--upgrade" in args)
    _say("requirements/site.txt, requirements/all.txt and binder/requirements.txt are up to date; commit them.")
    return 0


# ------------------------------------------------------------------ install


def _installed() -> dict:
    try:
        return json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return {}


def _wanted(which: str) -> dict:
    digest = hashlib.sha256(LOCK[which].read_bytes() + sys.version.encode()).hexdigest()
    return {"set": which, "lock": digest, "bytecode": True}  # a venv installed without .pyc syncs once more


def _satisfied(which: str) -> bool:
    have = _installed()
    if have == _wanted(which):
        return True
    return which == "site" and have == _wanted("all")  # site.txt is all.txt's versions, fewer of them


def _install_set(which: str, uv: str | None) -> None:
    lock = LOCK[which].relative_to(ROOT)
    what = _t("installing the packages in {lock}", lock=lock)
    # Bytecode at install: the machines that run the course often set PYTHONDONTWRITEBYTECODE=1, so
    # without .pyc every grader, kernel and CLI process would compile pytest, Jupyter and the rest again.
    if uv:  # sync: exactly the locked set, nothing else left in the venv; uv compiles only when asked
        ok = _run([uv, "pip", "sync", "--compile-bytecode", "--python", PYTHON, lock], what) and _run(
            [uv, "pip", "install", "--python", PYTHON, "--no-deps", "-e", "."], _t("installing the course itself")
        )
        if not ok:  # e.g. a proxy that re-signs TLS with a certificate only the system's store (pip's) trusts
            _say(_t("uv could not install the packages; pip tries instead (COURSE_INSTALLER=pip skips uv)"))
            uv = None
    if not uv:  # pip compiles what it installs (--compile is its default; said so that nothing turns it off)
        pip = _venv_pip()
        ok = _run([*pip, "install", "--compile", "-r", lock], what) and _run(
            [*pip, "install", "--no-deps", "-e", "."], _t("installing the course itself")
        )
    if ok:
        compile_sources()
    if not ok:
        _fail(
            _t(
                "installing the course's Python packages failed (see the output above). "
                "Check the network connection to the package index and run the command again."
            )
        )


def compile_sources() -> None:
    """The course's own modules to bytecode (src/: the installer does not compile an editable install).
    Only what changed is compiled again; `course test` does this before every run.  A module that does
    not compile is reported by whatever imports it, not here."""
    subprocess.call(
        [str(PYTHON), "-m", "compileall", "-q", "-j", "0", str(ROOT / "src")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def ensure_installed(which: str) -> None:
    if sys.version_info < (3, 11):
        _fail(_t("the course needs Python 3.11 or newer; this is {version}.", version=sys.version.split()[0]))
    if not PYTHON.exists():
        _make_venv()
    if which == "site" and _installed().get("set") == "all":
        which = "all"  # a venv that has everything keeps everything (serve never uninstalls the test tools)
    if locks_fresh() and _satisfied(which):
        return
    started = time.monotonic()
    uv = _uv()
    if not locks_fresh():
        if not uv:
            _fail("pyproject.toml changed since requirements/ was written, and refreshing the locks needs uv.")
        _say("pyproject.toml changed since the locks were written: refreshing requirements/ (commit them)")
        write_locks(uv)
    _say(
        _t(
            "installing {what} from requirements/{which}.txt with {tool}",
            which=which,
            tool="uv" if uv else "pip",
            what=_t("what the site needs" if which == "site" else "the course and its tools"),
        )
    )
    _install_set(which, uv)
    STAMP.write_text(json.dumps(_wanted(which)))
    _say(_t("set up in {s} s", s=f"{time.monotonic() - started:.0f}"))


# ------------------------------------------------------------------ run, and stop what we started


def run_course(args: list[str]) -> int:
    """Run ``course ARGS`` in its own process group.  SIGTERM, SIGINT or SIGHUP to this process stop
    that whole group (the site server, JupyterLab, pytest and whatever they started) and free its ports;
    a command that ends by itself leaves what it meant to keep running (``cluster start``) alone."""
    env = dict(os.environ, VIRTUAL_ENV=str(VENV), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.Popen([str(BIN / "course"), *args], env=env, cwd=ROOT, process_group=0)
    stopped: list[int] = []

    def forward(signum, _frame) -> None:
        stopped.append(signum)
        _signal_group(proc.pid, signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    code = proc.wait()
    if stopped:
        _stop_group(proc.pid)
        return 128 + stopped[0]
    return 128 - code if code < 0 else code


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _stop_group(pgid: int, grace: float = 10.0) -> None:
    """What is left of the group after its leader ended: SIGTERM, then SIGKILL after ``grace`` seconds."""
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _signal_group(pgid, 0):
        if time.monotonic() > deadline:
            _signal_group(pgid, signal.SIGKILL)
            return
        time.sleep(0.1)


def main(argv: list[str]) -> int:
    args = argv or ["--help"]
    if args[0] == "lock":
        return cmd_lock(args[1:])
    ensure_installed("site" if args[0] in SITE_COMMANDS or args[0] in ("-h", "--help") else "all")
    return run_course(args)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
