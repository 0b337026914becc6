"""The code the lessons teach, saved for later lessons: ``helpers.lessons.lesson_NN``.

Each module is written by ``make export`` (``tools/export_lessons.py``) from the cells of lesson NN marked
``#| export``: the lesson is where the code is read and run first; later lessons and the exercise checks
import it from here, for example ``from helpers.lessons.lesson_03 import AppliedLRRecorder``. Never edit a module
by hand: edit the notebook and run ``make export`` (``tests/test_lessons_export.py`` fails while they differ).
"""
