"""Every course plot is labelled: finish() refuses an unlabelled one."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.plots import COURSE_DPI, apply_course_style, finish, new_axes  # noqa: E402


def test_labelled_axes_give_a_figure() -> None:
    apply_course_style()
    ax = new_axes("Loss", "step", "loss (nats)")
    ax.plot([0, 1], [1, 0], label="train")
    figure = finish(ax)
    assert figure.dpi == COURSE_DPI and ax.get_legend() is not None
    plt.close(figure)


def test_unlabelled_plot_is_refused() -> None:
    _, ax = plt.subplots()
    ax.set_title("no axis labels")
    with pytest.raises(ValueError, match="x label, y label"):
        finish(ax)
    plt.close(ax.figure)
