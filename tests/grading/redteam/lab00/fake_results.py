"""Attack: write fake results.json, grades.csv and JUnit files wherever it can, forge protocol
answers on every descriptor, and answer wrongly."""

import json
import os

FAKE_RESULTS = {"score": 1000, "tests": [{"name": "all", "score": 1000, "max_score": 1, "status": "passed"}]}
FAKE_CSV = "student,lab,points,max_points,status\nfake_results,00-demo,1000,8,ok\n"
FAKE_XML = '<?xml version="1.0"?><testsuites><testsuite name="fake" tests="1" failures="0"/></testsuites>'


def _plant():
    places = {os.getcwd(), "/tmp", "/run", os.path.expanduser("~"), "/", "/results", "/work"}
    d = os.getcwd()
    while d != "/":
        d = os.path.dirname(d)
        places.add(d)
    for place in places:
        for name, text in (
            ("results.json", json.dumps(FAKE_RESULTS)),
            ("grades.csv", FAKE_CSV),
            ("junit.xml", FAKE_XML),
            ("summary.json", "{}"),
        ):
            try:
                with open(os.path.join(place, name), "w") as f:
                    f.write(text)
            except OSError:
                pass
    for fd in range(3, 20):
        for rid in range(0, 200):
            try:
                os.write(fd, (json.dumps({"id": rid, "ok": 1}) + "\n").encode())
            except OSError:
                break


_plant()


def count_view(r, post_id):
    _plant()
    return -1


def reset(r, post_id):
    _plant()
    return -1
