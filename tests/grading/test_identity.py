"""Students keep their names: exactly (NFC) in grades.csv, feedback, Gradescope and JUnit output.

Red-team cases: Cyrillic and Chinese names, ``alice`` beside ``alice_2`` and ``alice.zip``, names that
differ only in case or normalisation, a name that is a spreadsheet formula, one that looks like a
path or a Windows device, bytes that are not UTF-8, a name as long as a file name can be.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import shutil
import unicodedata
import xml.etree.ElementTree as ET
import zipfile

import pytest

from redis_course.labs.grading.grade import grade
from redis_course.labs.authoring.model import find_lab
from redis_course.labs.grading.names import MAX_FILE_BYTES, assign, escape_entry, file_key, file_stem
from redis_course.labs.grading.report import md_inline, read_csv
from redis_course.labs.authoring.wrong import composed_path

NFC_NAME = unicodedata.normalize("NFC", "Йорик")
NFD_NAME = unicodedata.normalize("NFD", "Йорик")
LONG_NAME = "王" * 84  # 252 bytes: a file name that cannot take ".xml" after it
NOT_UTF8 = os.fsdecode(b"bad-\xff\xfe")


def names(entries):
    return {s.folder: s.name for s in assign(entries)}


def test_names_in_any_alphabet_are_kept():
    got = names([("Иванов", "dir"), ("Петров", "dir"), ("王伟", "dir"), ("José María", "dir")])
    assert got == {"Иванов": "Иванов", "Петров": "Петров", "王伟": "王伟", "José María": "José María"}


def test_a_name_is_never_changed_because_of_another_that_does_not_collide():
    assert names([("alice", "dir"), ("alice_2", "dir")]) == {"alice": "alice", "alice_2": "alice_2"}


def test_collisions_get_a_suffix_never_an_existing_name_and_show_their_folder():
    got = assign([("alice.zip", "zip"), ("alice", "dir"), ("alice (2)", "dir"), ("alice_2", "dir")])
    assert [(s.name, s.folder) for s in got] == [
        ("alice (3)", "alice.zip"),
        ("alice", "alice"),
        ("alice (2)", "alice (2)"),
        ("alice_2", "alice_2"),
    ]
    got = [s.name for s in assign([("Bob", "dir"), ("bob", "dir"), (NFD_NAME, "dir"), (NFC_NAME, "dir")])]
    assert got == ["Bob", "bob (2)", NFC_NAME + " (2)", NFC_NAME]  # NFC sorts before NFD: it keeps the name
    assert all(unicodedata.is_normalized("NFC", n) for n in got)


def test_names_do_not_depend_on_the_order_entries_are_listed_in():
    entries = [("alice", "dir"), ("alice.zip", "zip"), ("Alice", "dir"), (NFD_NAME, "dir"), (NFC_NAME, "dir")]
    expected = {(s.name, s.folder, s.file) for s in assign(entries)}
    for perm in itertools.permutations(entries):
        assert {(s.name, s.folder, s.file) for s in assign(list(perm))} == expected


@pytest.mark.parametrize(
    "name",
    [
        "..",
        "../../etc/passwd",
        "..\\..\\evil",
        "CON",
        "nul.txt",
        "a:b",
        'x?*<>|"',
        "trailing. ",
        "tab\there",
        "new\nline",
        "\x1b[31mred",
        "/abs",
        LONG_NAME,
        "Com1",
        ".hidden",
        "",
    ],
)
def test_file_names_stay_in_their_folder_on_every_file_system(tmp_path, name):
    stem = file_stem(name)
    assert stem and len(stem.encode()) <= MAX_FILE_BYTES
    assert not set(stem) & set('<>:"/\\|?*') and all(ord(c) >= 32 and c != "\x7f" for c in stem)
    assert stem.split(".")[0].upper() not in {"CON", "NUL", "COM1"} and not stem.startswith(".")
    assert stem == stem.rstrip(". ")
    path = tmp_path / f"{stem}.xml"
    path.write_text("x")
    assert path.resolve().parent == tmp_path.resolve()


def test_long_names_that_collide_after_shortening_still_get_distinct_files():
    a, b = LONG_NAME + "甲", LONG_NAME + "乙"
    got = assign([(a, "dir"), (b, "dir")])
    assert {s.name for s in got} == {a, b + " (2)"} or {s.name for s in got} == {a + " (2)", b}
    assert len({file_key(s.file) for s in got}) == 2 and all(len(s.file.encode()) <= MAX_FILE_BYTES for s in got)


# -------------------------------------------------------------- a whole class, graded end to end
LAB = find_lab("00")
CLASS = {  # folder -> (source or None, expected student name, expected points)
    "Иванов": (LAB.solution_file, "Иванов", 8),
    "Петров": (LAB.starter_file, "Петров", 0),
    "王伟": (composed_path(LAB, "reset_keeps_key"), "王伟", 7),
    "alice": (composed_path(LAB, "one_counter_for_all"), "alice", 1),
    "alice.zip": (LAB.solution_file, "alice (2)", 8),
    "alice_2": (None, "alice_2", 0),
    "=2+5": (None, "=2+5", 0),
    "@SUM(1)": (None, "@SUM(1)", 0),
    "a\\..\\..\\evil": (None, "a\\..\\..\\evil", 0),
    "CON": (None, "CON", 0),
    NFC_NAME: (None, NFC_NAME, 0),
    NFD_NAME: (None, NFC_NAME + " (2)", 0),
    NOT_UTF8: (None, "bad-\ufffd\ufffd", 0),
    LONG_NAME: (None, LONG_NAME, 0),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("identity")
    subs, out = base / "submissions", base / "results"
    subs.mkdir()
    for folder, (source, _name, _points) in CLASS.items():
        if folder.endswith(".zip"):
            with zipfile.ZipFile(subs / folder, "w") as zf:
                zf.write(source, "labs/00-demo/lab.py")
            continue
        os.mkdir(os.fsencode(subs / folder))
        if source:
            (subs / folder / "00-demo").mkdir()
            shutil.copy(source, subs / folder / "00-demo" / "lab.py")
    before = sorted(os.listdir(base))
    summary = grade(subs, out, labs=["00-demo"], progress=False, workers=2)
    assert sorted(os.listdir(base)) == sorted(before + ["results"])  # nothing written beside RESULTS
    return out, summary


def expected() -> dict[str, tuple[str, int]]:
    """student name -> (folder as shown: its bytes, escaped, points)"""
    return {name: (escape_entry(folder), points) for folder, (_src, name, points) in CLASS.items()}


def test_the_folder_column_tells_twins_apart():
    shown = {escape_entry(folder) for folder in CLASS}
    assert len(shown) == len(CLASS) and "И\\u0306орик" in shown and "bad-\\xff\\xfe" in shown


def test_grades_csv_keeps_every_name_and_shows_its_folder(graded):
    out, summary = graded
    rows = {r.student: r for r in read_csv(out / "grades.csv")}
    assert {name: (r.folder, r.points) for name, r in rows.items()} == expected()
    assert summary.students == len(CLASS) and not summary.reference_problems


def test_grades_csv_opens_in_excel_with_cyrillic_and_chinese_names(graded):
    out, _ = graded
    raw = (out / "grades.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), "no UTF-8 byte-order mark: Excel shows Cyrillic and Chinese as mojibake"
    text = raw.decode("utf-8-sig")
    assert "Иванов,00-demo,8,8,ok,Иванов" in text and "王伟,00-demo,7,8,ok,王伟" in text


def test_no_cell_can_start_a_formula(graded):
    out, _ = graded
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        cells = [c for row in csv.reader(f) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'=2+5" in cells and "'@SUM(1)" in cells


def test_feedback_junit_and_gradescope_carry_the_exact_names(graded):
    out, _ = graded
    csv_rows = {r.student: r for r in read_csv(out / "grades.csv")}
    files = {p.stem for p in (out / "feedback").iterdir()}
    assert {"Иванов", "Петров", "王伟", "alice", "alice (2)", "alice_2", NFC_NAME, NFC_NAME + " (2)"} <= files
    assert len(files) == len(CLASS) == len({file_key(f) for f in files})
    for stem in files:
        suites = ET.parse(out / "junit" / f"{stem}.xml").getroot()
        name = suites.get("name")
        assert name in csv_rows, (stem, name)
        assert (out / "feedback" / f"{stem}.md").read_text(encoding="utf-8").splitlines()[0].endswith(md_inline(name))
        gs = json.loads((out / "gradescope" / stem / "results.json").read_text(encoding="utf-8"))
        assert gs["score"] == csv_rows[name].points
    for p in out.rglob("*"):
        assert p.resolve().is_relative_to(out.resolve()) and unicodedata.is_normalized("NFC", p.name)
