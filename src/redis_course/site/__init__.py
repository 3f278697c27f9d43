"""The course site: one mkdocs-material site per language built from the one ``mkdocs.yml``, its hooks and its web fonts.

The lesson pages' questions (:mod:`redis_course.quiz`) and the browser console (:mod:`redis_course.webconsole`) add their own hooks; this package lists them in each language's configuration.
"""
