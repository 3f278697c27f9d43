"""Graded labs: a lab on disk, the run of its tests on a student's file, the student's self-check,
bulk grading and the student edition, one subpackage per job.

Subpackages, from the bottom up (``[tool.importlinter]`` in pyproject.toml holds the layers: each
imports only those below it, and none imports :mod:`.cli`):

* :mod:`.sandbox`   — the box one student run happens in: processes, limits, a private Redis, faults
* :mod:`.authoring` — a lab on disk: lab.yml, the starter made from the solution, known-wrong code
* :mod:`.engine`    — one run of a lab's tests on one student file: the runner, the pytest plugin,
  the ``lab`` fixture and what lab tests import
* :mod:`.check`     — the student's self-check: ``course check``, its table, GitHub Classroom
* :mod:`.grading`   — bulk grading: intake, orchestration, reports, ``course grade``, Gradescope
* :mod:`.publish`   — the student edition: ``course release`` and the files only it has
* :mod:`.cli`       — the lab commands of ``course``
"""
