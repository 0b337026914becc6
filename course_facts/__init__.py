"""The course's facts, standard library only, so that any Python 3 reads them before ``.venv`` exists.

- :mod:`course_facts.pins`: the pinned releases (from ``requirements.txt``) and the offline settings;
  ``python -m tools.pins --offline`` is how the Makefile and the shell scripts read them.
- :mod:`course_facts.registry`: the lesson registry, ``lessons.toml``.

The runtime (``helpers``), the exercises, the checker and the tools read them; they import nothing of the course.
"""
