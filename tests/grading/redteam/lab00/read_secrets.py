"""Attack: find the solution and the hidden tests on disk, use the solution if found."""

import glob
import os

FOUND = []


def _search():
    candidates = []
    try:
        import redis_course

        root = os.path.dirname(os.path.dirname(os.path.dirname(redis_course.__file__)))
        candidates += [os.path.join(root, "labs", "00-demo", "solution.py")]
        candidates += glob.glob(os.path.join(root, "labs", "*", "tests", "hidden", "*.py"))
        candidates += glob.glob(os.path.join(root, ".git", "**"), recursive=False)
    except Exception:
        pass
    for pattern in (
        "/work/*/labs/*/solution.py",
        "/*/labs/*/solution.py",
        "/*/*/labs/*/solution.py",
        "/root/**/solution.py",
        "/tmp/**/lab.py",
        "/run/**/lab.py",
        "/proc/*/cwd/*.py",
        "/proc/*/root/work/main/labs/00-demo/solution.py",
    ):
        try:
            candidates += glob.glob(pattern, recursive=True)
        except Exception:
            pass
    for path in candidates:
        try:
            with open(path) as f:
                text = f.read()
            if "def count_view" in text and "NotImplementedError" not in text and path != __file__:
                FOUND.append(text)
        except OSError:
            pass


_search()


def _solution():
    for text in FOUND:
        ns = {}
        try:
            exec(text, ns)
            return ns
        except Exception:
            continue
    raise FileNotFoundError("no solution found")


def count_view(r, post_id):
    return _solution()["count_view"](r, post_id)


def reset(r, post_id):
    return _solution()["reset"](r, post_id)
