"""A lab as its author writes it, on disk: ``labs/NN-topic/`` with lab.yml, hints, tests, solution.
Nothing here runs student code; the other subpackages read labs through :mod:`.model`.

* :mod:`.model`     — a lab on disk: discovery, titles, hints, which files it has
* :mod:`.labconfig` — ``lab.yml``, checked on load: one sentence naming the file and the key
* :mod:`.starter`   — starter code, generated from the solution's ``# BEGIN/END SOLUTION`` regions
* :mod:`.wrong`     — known-wrong implementations as differences from the solution
"""
