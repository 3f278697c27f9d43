"""Attack: look around the checkout and the grading run for the solution, hidden tests and results:
the checkout's own labs, sibling clones beside the checkout (``sibling/``), the results and
submissions folders beside them, and the run folder (run.json, results.json, pytest.log).  Prints
``FOUND ...`` for every file it could read and folder it could list, with its entries (the test
reads the output)."""

import glob
import os


def _look():
    found = []
    try:
        import redis_course

        src = os.path.dirname(os.path.dirname(os.path.abspath(redis_course.__file__)))
    except Exception:  # noqa: BLE001
        return found
    checkout = os.path.dirname(src)
    parent = os.path.dirname(checkout)
    run = os.path.dirname(os.path.abspath(os.getcwd()))
    dirs = [
        parent,
        checkout,
        os.path.join(checkout, "labs"),
        run,
        os.path.join(parent, "sibling"),
        os.path.join(parent, "results"),
        os.path.join(parent, "submissions"),
    ]
    files = [
        os.path.join(checkout, "labs", "00-demo", "solution.py"),
        os.path.join(parent, "sibling", "labs", "00-demo", "solution.py"),
        os.path.join(parent, "sibling", "labs", "00-demo", "tests", "hidden", "test_demo_hidden.py"),
        os.path.join(parent, "results", "grades.csv"),
        os.path.join(parent, "results", "summary.json"),
    ]
    files += [os.path.join(run, name) for name in ("run.json", "results.json", "pytest.log", "pytest.ini")]
    files += glob.glob(os.path.join(parent, "*", "labs", "*", "solution.py"))
    files += glob.glob(os.path.join(run, "*.json")) + glob.glob("/run/*/run.json") + glob.glob("/tmp/*/run.json")
    for d in dirs:
        try:
            found.append(f"FOUND {d}/: {' '.join(sorted(os.listdir(d)))}")
        except OSError:
            pass
    for f in sorted(set(files)):
        try:
            with open(f, "rb") as fh:
                fh.read(1)
            found.append(f"FOUND {f}")
        except OSError:
            pass
    return found


print("\n".join(["read_around ran", *_look()]), flush=True)


def count_view(r, post_id):
    return -1


def reset(r, post_id):
    return -1
