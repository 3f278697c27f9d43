"""Notebooks: one source, three languages, stored executed, one rendered page per language.

* :mod:`.localize` — ``notebooks/NN-topic.py`` (jupytext) → the notebook a reader of one language opens,
  with heading ids shared across languages;
* :mod:`.execute` — running a notebook in a fresh kernel on fakeredis or a real server, and the
  executed notebooks stored in ``notebooks/<lang>/`` with the key of what changes their outputs;
* :mod:`.render`  — a stored notebook → a Material page, with nbconvert (nothing is executed).

Cell tags: ``varies`` (the output depends on the machine, the time or the backend's name: ignored
when outputs are compared), ``backend-differs`` (Redis and fakeredis really answer differently: the
comparison requires a difference), ``raises-exception`` (nbclient's own: the cell is meant to raise).
"""

from __future__ import annotations

from .localize import ipynb_path, lesson_of, sources, student_notebook

MASK_TAG = "varies"
DIFFERS_TAG = "backend-differs"

__all__ = ["MASK_TAG", "DIFFERS_TAG", "ipynb_path", "lesson_of", "sources", "student_notebook", "render_pages"]


def render_pages(*args, **kwargs):
    """Render every stored notebook into its page (:func:`.render.render_pages`)."""
    from .render import render_pages as impl

    return impl(*args, **kwargs)
