"""The translators' tools, ``course i18n``: the pages, notebook passages, catalogs, question sources and term base checked for parity in three languages, and the catalogs extracted and updated.

What a reader sees in their language at run time is :mod:`redis_course.l10n`; this package only checks and maintains it.
"""
