"""One run of one lab's tests on one student file: a fresh grader process under pytest, whose
tests reach the student's code in the sandbox; what lab tests import is here too.

* :mod:`.runner`        — starts the grader process, applies the budget, returns the results
* :mod:`.zygote`        — the process every grader is forked from, pytest already imported
* :mod:`.pytest_plugin` — the plugin the grader loads (``-p redis_course.labs.engine.pytest_plugin``)
* :mod:`.proxy`         — the ``lab`` fixture: the student's module, seen from a test
* :mod:`.testing`       — what lab tests import: ``points``, ``hint``, ``contract``, the errors
* :mod:`.modeltest`     — what model-based lab tests share (Hypothesis' stateful testing)
"""
