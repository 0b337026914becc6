"""Plots for the lessons: one submodule per topic, all drawn with :mod:`helpers.plots.base`.

``base`` sets the course style (dpi about 80, titles, axis labels with units) and is re-exported here.
Topic modules (for example ``helpers.plots.schedules``) are imported by the lessons that use them.
"""

from helpers.plots.base import COURSE_DPI, apply_course_style, finish, new_axes

__all__ = ["COURSE_DPI", "apply_course_style", "finish", "new_axes"]
