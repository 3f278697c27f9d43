"""The grading progress bar (tqdm) written to a file or a pipe: whole lines, as often as the rule says."""

from __future__ import annotations

from redis_course.labs.grading.orchestrate import Progress


def test_off_a_terminal_the_bar_is_a_line_after_the_first_run_then_every_twentieth(capsys, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "en")
    bar = Progress(40, every_s=3600)
    for k in range(40):
        bar.update("error" if k == 5 else "ok")
    bar.end_line()
    lines = capsys.readouterr().err.splitlines()
    assert "\r" not in "".join(lines)
    assert [line.split()[2] for line in lines] == ["1/40"] + [f"{n}/40" for n in range(2, 41, 2)]
    assert lines[0].startswith("grading [" + "." * 30 + "]")
    assert lines[-1].startswith("grading [" + "#" * 30 + "] 40/40") and lines[-1].endswith("error:1")


def test_an_interrupted_bar_is_closed_and_a_disabled_one_says_nothing(capsys):
    bar = Progress(10)
    bar.update("ok")
    bar.end_line()
    assert capsys.readouterr().err.count("\n") == 1
    quiet = Progress(10, enabled=False)
    quiet.update("ok")
    quiet.end_line()
    assert capsys.readouterr().err == "" and quiet.done == 1
