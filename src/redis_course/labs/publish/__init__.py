"""The student edition of the repository: what ships (starters, public tests, pages without
solutions) and what only it has (a README for students, edition.json, the Classroom workflow).

* :mod:`.release` — ``course release OUT``: the steps that write the edition
* :mod:`.edition` — the files only the student edition has
"""
