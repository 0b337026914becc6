"""The exercises at the end of each lesson, for the learner and the teacher, apart from the notebooks' runtime.

- :mod:`exercises.checks`: ``exercises.checks.lesson_NN`` defines lesson NN's exercises (``q1``, ``q2``, ...) and
  runs a learner's answer for real; its shared parts (``core``, ``fixtures``, ...) sit beside it.
- :mod:`exercises.solutions`: ``exercises.solutions.lesson_NN``, the reference answers (left out of the
  participants' copy, ``python -m tools.participant_copies``).

The checks import the course's runtime (``helpers``, the lessons' exported code); ``helpers`` never imports them.
"""
