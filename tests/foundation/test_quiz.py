"""The lessons' questions (quizzes/NN-topic.yml): well formed, and every marked answer is what Redis does.

Each ``predict`` and ``race`` question runs like a page's transcript (the same runner): on a fresh
fakeredis server, on a private redis-server after FLUSHALL (the course owns it), and on the shared
server at 127.0.0.1:6379, never flushed, with every key under a prefix of the test's own.
"""

from __future__ import annotations

import copy

import pytest

from foundation import shared
from redis_course import paths, quiz
from redis_course.core import transcripts
from redis_course.quiz import execute

SOURCES = quiz.load_all()
RUNNABLE = [q for src in SOURCES for q in src["questions"] if q["kind"] in ("predict", "race")]


@pytest.fixture(scope="module")
def private_server():
    with shared.private_server_or_skip("the questions") as srv:
        yield srv


def test_every_lesson_has_questions_of_each_kind():
    assert [s["lesson"] for s in SOURCES] == [
        "01-incr",
        "02-atomicity",
        "03-counters",
        "04-rate-limiting",
        "05-durable",
        "06-cluster",
        "07-production",
    ]
    for src in SOURCES:
        kinds = {q["kind"] for q in src["questions"]}
        assert len(src["questions"]) >= quiz.MIN_QUESTIONS, src["lesson"]
        assert {"choice", "race"} <= kinds, (src["lesson"], kinds)


def test_ids_are_unique_across_lessons():
    ids = [q["id"] for s in SOURCES for q in s["questions"]]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("q", RUNNABLE, ids=lambda q: q["id"])
def test_marked_answer_on_fakeredis(q):
    problems = execute.problems(q, transcripts.fake_backend())
    assert not problems, "\n".join(problems)


@pytest.mark.real_redis
@pytest.mark.parametrize("q", RUNNABLE, ids=lambda q: q["id"])
def test_marked_answer_on_real_redis(q, private_server):
    problems = execute.problems(q, transcripts.backend_for(private_server.client(prefix="")))
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def shared_server():
    """The shared server at 127.0.0.1:6379 (never flushed): the questions' keys under a prefix of their own."""
    import secrets

    from foundation.shared import require_real_redis

    from redis_course import connect

    client = connect(require_real_redis(), prefix=f"course:test:quiz:{secrets.token_hex(4)}:")
    yield execute.PrefixedBackend(client)
    client.cleanup()
    assert not list(client.scan_iter(match=client.prefix + "*")), "the questions left keys behind"


@pytest.mark.real_redis
@pytest.mark.parametrize("q", RUNNABLE, ids=lambda q: q["id"])
def test_marked_answer_on_the_shared_server_under_a_prefix(q, shared_server):
    problems = execute.problems(q, shared_server)
    assert not problems, "\n".join(problems)


def test_prefixing_refuses_an_argument_that_is_also_a_key_name(shared_server):
    raw = shared_server.fresh()
    try:
        with pytest.raises(ValueError, match="both a key and another argument"):
            raw.execute_command("SET", "k", "k")
        assert raw.execute_command("SET", "k", "v") == "OK"
        assert shared_server.client.get(shared_server.client.key("k")) == "v"  # under the prefix, nowhere else
    finally:
        raw.close()


def test_the_hash_slot_question_is_what_crc16_says():
    # CLUSTER KEYSLOT answers only in cluster mode; the course's own slot function (checked against a
    # cluster in tests/lessons/test_06_cluster.py) proves the choice question instead
    import re

    from redis_course.cluster.slots import same_slot

    q = next(q for s in SOURCES for q in s["questions"] if q["id"] == "same-slot")
    for o in q["options"]:
        keys = re.findall(r"`([^`]+)`", o["text"]["en"])
        assert len(keys) == 2 and same_slot(*keys) == (o["id"] in quiz.right_ids(q)), (o["id"], keys)


def _flipped(kind):
    q = copy.deepcopy(next(q for q in RUNNABLE if q["kind"] == kind))
    wrong = next(o["id"] for o in q["options"] if o["id"] not in quiz.right_ids(q))
    q["answer"] = [wrong] if kind == "race" else wrong
    return q


def test_a_flipped_predict_answer_fails():
    problems = execute.problems(_flipped("predict"), transcripts.fake_backend())
    assert any("the marked answer is" in p for p in problems), problems


def test_a_flipped_race_answer_fails():
    problems = execute.problems(_flipped("race"), transcripts.fake_backend())
    assert any("not marked right" in p for p in problems) and any("no interleaving" in p for p in problems), problems


def test_race_interleavings_are_all_orders():
    q = {"clients": {"A": [{"run": "x"}, {"run": "y"}], "B": [{"run": "z"}, {"run": "w"}]}}
    orders = list(execute.orders(q))
    assert len(orders) == 6 and len({tuple(o) for o in orders}) == 6
    for o in orders:
        assert [i for c, i in o if c == "A"] == [0, 1] and [i for c, i in o if c == "B"] == [0, 1]


def test_validate_reports_in_sentences():
    src = copy.deepcopy(SOURCES[0])
    del src["questions"][0]["wrong"]
    src["questions"][1]["answer"] = "zz"
    problems = quiz.validate(src, "01-incr")
    assert any("has no misconception" in p for p in problems)
    assert any("does not exist" in p for p in problems)
    with pytest.raises(quiz.QuizError, match="No question source"):
        quiz.load("99")


# ------------------------------------------------------------------ placement and rendering


def test_every_question_is_placed_at_the_end_of_its_section_in_every_language():
    from redis_course import paths
    from redis_course.quiz import hook

    for src in SOURCES:
        for lang in paths.LANGS:
            page = paths.DOCS / lang / src["lesson"] / "index.md"
            out = hook.place(page.read_text(encoding="utf-8"), src["questions"], str(page))
            placed = [i for m in hook._SLOT.finditer(out) for i in m.group(1).split()]
            assert sorted(placed) == sorted(q["id"] for q in src["questions"]), (lang, src["lesson"])
            for m in hook._SLOT.finditer(out):  # a marker sits right before a ## heading, or at the end
                rest = out[m.end() :].lstrip("\n")
                assert rest.startswith("## ") or rest.startswith(hook._SUMMARY), (lang, m.group(1))


def test_a_section_that_does_not_exist_is_one_sentence():
    from redis_course.quiz import hook

    q = dict(SOURCES[0]["questions"][0], section="no-such-heading")
    with pytest.raises(hook.QuizPlacementError, match="no heading id of the page"):
        hook.place("## A { #a }\n\ntext\n", [q], "p.md")


def test_rendered_question_holds_every_explanation_and_no_answer_shown():
    from redis_course.quiz import render

    q = next(q for q in RUNNABLE if q["kind"] == "predict")
    out = render.question(q, "ru", "Раздел")
    assert out.count('class="course-quiz__why"') == 1 + len(q["wrong"])
    assert 'class="course-quiz__feedback" hidden' in out
    assert "<legend>" in out and 'role="status"' in out
    assert render.strings("ru")["check"] != render.strings("en")["check"]


# ------------------------------------------------------------------ translation parity


def test_question_sources_are_in_parity():
    from redis_course.quiz import parity

    assert parity.problems() == {}


def test_parity_catches_changed_code_untranslated_text_and_glossary_terms(tmp_path):
    import shutil

    import yaml

    from redis_course.quiz import parity

    shutil.copy(quiz.sources()[1], tmp_path / "02-atomicity.yml")
    data = yaml.safe_load((tmp_path / "02-atomicity.yml").read_text(encoding="utf-8"))
    q = data["questions"][0]
    q["explain"]["ru"] = q["explain"]["ru"].replace("`INCR views`", "`INCR view`")  # code changed
    q["prompt"]["zh"] = q["prompt"]["en"]  # left in English
    q["explain"]["zh"] = q["explain"]["zh"].replace("丢失更新", "更新丢了")  # not the glossary's term
    (tmp_path / "02-atomicity.yml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    found = "\n".join(parity.problems(tmp_path)[f"{tmp_path.name}/02-atomicity.yml"])
    assert "explain.ru: inline code differs" in found and "'INCR view'" in found
    assert "prompt.zh: not translated" in found
    assert "glossary's '丢失更新'" in found


# ------------------------------------------------------------------ the labs' wrong patterns


def _wrong_files(lesson):
    from redis_course import paths

    return sorted(p.stem for p in (paths.ROOT / "labs" / lesson / "wrong").glob("*.py") if p.stem != "__init__")


@pytest.mark.parametrize("src", SOURCES, ids=lambda s: s["lesson"])
def test_every_wrong_pattern_of_the_lab_is_a_wrong_option(src):
    if not any((paths.ROOT / "labs").glob("*/solution.py")):
        pytest.skip("the student edition holds no known-wrong files (they stay with the instructor)")
    files = _wrong_files(src["lesson"])
    covered = quiz.covered(src)
    assert files, f"labs/{src['lesson']}/wrong/ holds no wrong pattern"
    missing = [f for f in files if f not in covered]
    stale = sorted(set(covered) - set(files))
    assert not missing, f"labs/{src['lesson']}/wrong/ patterns no question option covers: {missing}"
    assert not stale, f"options cover wrong patterns that labs/{src['lesson']}/wrong/ does not hold: {stale}"


def test_coverage_check_sees_a_dropped_mapping_and_a_misplaced_one():
    if not any((paths.ROOT / "labs").glob("*/solution.py")):
        pytest.skip("the student edition holds no known-wrong files (they stay with the instructor)")
    src = copy.deepcopy(SOURCES[0])
    q = next(q for q in src["questions"] if q["kind"] != "race" and any(o.get("covers") for o in q["options"]))
    o = next(o for o in q["options"] if o.get("covers"))
    dropped = o["covers"].pop()
    assert dropped in _wrong_files(src["lesson"]) and dropped not in quiz.covered(src)
    right = next(o for o in q["options"] if o["id"] in quiz.right_ids(q) and o["id"] not in q.get("wrong", {}))
    right["covers"] = [dropped]
    assert any("has no `wrong` entry" in p for p in quiz.validate(src, src["lesson"]))
    o["covers"].append(dropped)
    assert any("another option already covers" in p for p in quiz.validate(src, src["lesson"]))
