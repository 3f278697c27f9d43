"""The `course` command passes options through to pytest and JupyterLab."""

from __future__ import annotations

from redis_course import cli


def test_test_passes_every_option_to_pytest(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli, "cmd_test", lambda args: seen.setdefault("args", args.pytest_args) and 0)
    assert cli.main(["test", "-q", "-k", "notebooks", "-x"]) == 0
    assert seen["args"] == ["-q", "-k", "notebooks", "-x"]


def test_test_runs_two_workers_and_fast_leaves_out_the_slow_marks():
    assert cli.pytest_command(["-k", "labs"]) == ["-n", "2", "--dist", "loadgroup", "-k", "labs"]
    assert cli.pytest_command(["--fast", "-x"]) == [
        "-m",
        "not slow and not browser",
        "-n",
        "2",
        "--dist",
        "loadgroup",
        "-x",
    ]
    for own in (["-n", "0"], ["-n4"], ["--numprocesses=3"], ["--dist", "load"], ["-p", "no:xdist"], ["--pdb"]):
        assert cli.pytest_command(own) == own  # the caller's workers, or one process to debug in


def test_jupyter_keeps_lang_and_passes_the_rest(monkeypatch):
    seen = {}

    def fake(args):
        seen["lang"], seen["rest"] = args.lang, args.jupyter_args
        return 0

    monkeypatch.setattr(cli, "cmd_jupyter", fake)
    assert cli.main(["jupyter", "--lang", "zh", "--no-browser", "--port", "8899"]) == 0
    assert seen == {"lang": "zh", "rest": ["--no-browser", "--port", "8899"]}


def test_check_commands_print_one_line_on_success(capsys):
    from redis_course.labs.authoring import starter
    from redis_course.notebooks import execute

    if starter.sync(check=True) or execute.stale():
        import pytest

        pytest.skip("the working tree has stale starters or notebooks")
    assert cli.main(["labs", "sync", "--check"]) == 0
    assert cli.main(["notebooks", "--check"]) == 0
    lines = capsys.readouterr().out.splitlines()
    from redis_course.notebooks import localize
    from redis_course.paths import LANGS

    stored = len(localize.sources()) * len(LANGS)
    assert len(lines) == 2 and lines[0].startswith("All ")
    assert lines[1].startswith(f"All {stored} stored notebooks match")


def test_a_broken_lab_package_is_an_error_not_a_missing_command(monkeypatch):
    import builtins

    import pytest

    real_import = builtins.__import__

    def broken(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "labs.cli" or (level and name == "labs.cli") or name.endswith("labs.cli"):
            raise ImportError("cannot import name 'x' from 'redis_course.labs.authoring.model'")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", broken)
    with pytest.raises(ImportError, match="redis_course.labs.authoring.model"):
        cli.build_parser()


def test_grade_limits_refuse_what_is_not_above_zero_in_one_sentence(capsys, monkeypatch):
    """A limit of 0, below 0, nan, infinite or not a number would make a box without one (a cgroup
    refuses a zero quota): `course grade` says so in one sentence, in the reader's language."""
    import pytest

    monkeypatch.setenv("COURSE_LANG", "en")
    for option in ("--box-cpus", "--call-timeout", "--lab-budget", "--memory-mb", "--cpu-s", "--workers"):
        for bad in ("0", "-1", "nan", "inf", "many"):
            with pytest.raises(SystemExit) as ended:
                cli.main(["grade", "subs", "--out", "res", "--lab", "00", option, bad])
            assert ended.value.code == 2
            err = capsys.readouterr().err.strip().splitlines()[-1]
            assert err.endswith(f"argument {option}: {bad!r} is not a number above 0."), err
    monkeypatch.setenv("COURSE_LANG", "ru")
    with pytest.raises(SystemExit):
        cli.main(["grade", "subs", "--out", "res", "--box-cpus", "0"])
    assert capsys.readouterr().err.strip().endswith("'0' — не число больше 0.")
