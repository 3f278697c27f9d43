"""The lessons' questions (quizzes/NN-topic.yml): well formed, and every marked answer is what Redis does.

Each ``predict`` and ``race`` question runs like a page's transcript (the same runner): on a fresh
fakeredis server, and on a private redis-server after FLUSHALL (the course owns it; the shared
server is never flushed).
"""
from __future__ import annotations

import copy
import os

import pytest

from redis_course import quiz, transcripts
from redis_course.quiz import execute
from redis_course.servers import private_redis, redis_server_binary

REQUIRE_REAL = os.environ.get("COURSE_REQUIRE_REAL_REDIS") == "1"
SOURCES = quiz.load_all()
RUNNABLE = [q for src in SOURCES for q in src["questions"] if q["kind"] in ("predict", "race")]


@pytest.fixture(scope="module")
def private_server():
    if not redis_server_binary():
        if REQUIRE_REAL:
            pytest.fail("redis-server is required (COURSE_REQUIRE_REAL_REDIS=1) to check the questions on real Redis")
        pytest.skip("redis-server is not installed: questions are checked on fakeredis only")
    with private_redis() as srv:
        yield srv


def test_every_lesson_has_questions_of_each_kind():
    assert [s["lesson"] for s in SOURCES] == ["01-incr", "02-atomicity", "03-counters", "04-rate-limiting",
                                              "05-durable", "06-cluster", "07-production"]
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
