"""Graded labs: discovery, starters, a sandbox for student code, self-check, release and bulk grading.

Modules, by what they hold:

* :mod:`.model`     — a lab on disk (``labs/NN-topic``: lab.yml, hints.yml, tests, solution/starter/lab.py)
* :mod:`.starter`   — starter code generated from the solution's ``# BEGIN/END SOLUTION`` regions
* :mod:`.errors`    — what a test sees when student code fails: StudentError, StudentTimeout, StudentCrash
* :mod:`.testing`   — what lab tests import: ``points``, ``hint``, the errors
* :mod:`.sandbox`   — the resource-limited child process that runs student code (+ :mod:`._child`)
* :mod:`.redisbox`  — the private Redis of one grading run (redis-server or a fakeredis server)
* :mod:`.proxy`     — the ``lab`` fixture object: calls into the child, parallel(), run_concurrently()
* :mod:`.pytest_plugin` — fixtures ``lab`` and ``redis``, markers, result collection
* :mod:`.runner`    — run one lab's tests for one student file in a fresh grader process
* :mod:`.check`, :mod:`.grade`, :mod:`.report`, :mod:`.release`, :mod:`.cli` — the commands
"""
