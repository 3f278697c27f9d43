#!/usr/bin/env python3
"""Set up the course in ./.venv (once, and again when pyproject.toml changes), then run a `course` command.

    python3 run.py serve      build the notebooks and the site, serve it at http://127.0.0.1:8000
    python3 run.py test       run the whole test suite
    python3 run.py <command>  any other `course` command: doctor, check, jupyter, i18n, release, grade ...

Only the standard library is used here, so this works on a machine that has nothing but python3 and git.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".course-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _say(msg: str) -> None:
    print(f"[course] {msg}", flush=True)


def _fail(msg: str) -> NoReturn:
    print(f"[course] {msg}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def _wanted_stamp() -> str:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def _make_venv() -> None:
    _say(f"creating a virtual environment in {VENV.name}/ ...")
    try:
        venv.EnvBuilder(with_pip=True, upgrade_deps=False).create(VENV)
        return
    except (subprocess.CalledProcessError, OSError):
        pass
    # Debian's python3 without python3-venv has no ensurepip: build the venv without pip and
    # let the system's pip install into it, if there is one.
    venv.EnvBuilder(with_pip=False).create(VENV)
    if subprocess.call([sys.executable, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL) != 0:
        _fail("Python cannot create a virtual environment with pip here. On Debian or Ubuntu run "
              "`sudo apt install python3-venv`, then run this command again.")


def _pip(*args: str) -> None:
    python = BIN / "python"
    has_pip = subprocess.call([str(python), "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) == 0
    cmd = [str(python), "-m", "pip"] if has_pip else [sys.executable, "-m", "pip", "--python", str(python)]
    if subprocess.call([*cmd, *args]) != 0:
        _fail("installing the course's Python packages failed (see the pip output above). "
              "Check the network connection to the package index and run the command again.")


def ensure_installed() -> None:
    if sys.version_info < (3, 11):
        _fail(f"the course needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    if not (BIN / "python").exists():
        _make_venv()
    if not STAMP.exists() or STAMP.read_text() != _wanted_stamp():
        _say("installing the course and its dependencies (first run takes a few minutes) ...")
        _pip("install", "--disable-pip-version-check", "-q", "-e", f"{ROOT}[dev]")
        STAMP.write_text(_wanted_stamp())


def main(argv: list[str]) -> int:
    ensure_installed()
    course = BIN / "course"
    env = dict(os.environ, VIRTUAL_ENV=str(VENV), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    args = argv or ["--help"]
    try:
        return subprocess.call([str(course), *args], env=env, cwd=ROOT)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
