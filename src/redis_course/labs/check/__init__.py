"""The student's self-check: ``course check`` runs a lab's public tests and prints a table in the
student's language; ``--classroom`` also reports the points to GitHub Classroom.

* :mod:`.selfcheck` — ``course check``: which Redis a lab runs on, the run, the table
* :mod:`.classroom` — GitHub Classroom autograding: the reporter's result, the workflow
* :mod:`.texts`     — the words of the tables and feedback, and text safe to show a terminal
"""
