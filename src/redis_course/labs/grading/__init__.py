"""Bulk grading for the instructor: every student's labs with public and hidden tests, resumable,
in parallel, with grades.csv and feedback per student; inside Gradescope too.

* :mod:`.grade`       — ``course grade SUBMISSIONS --out RESULTS``
* :mod:`.intake`      — which students there are, and their ``lab.py`` files, read safely
* :mod:`.names`       — who a submission belongs to: the student's name exactly as handed in
* :mod:`.orchestrate` — reference runs, every (student, lab) run, workers, the journal, progress
* :mod:`.report`      — grades.csv, Markdown feedback, results.json and JUnit XML per student
* :mod:`.summary`     — what the instructor reads at the end of a run
* :mod:`.gradescope`  — ``course gradescope LAB``: the autograder zip
* :mod:`.autograder`  — inside Gradescope: grade the submission, write results.json
"""
