"""One truthful set-up line (issue 59): the set-up cell names the profile, and no sizes that a lesson may then
change (2 layers, 256 reviews, 2 epochs at 3e-4 ...)."""

from __future__ import annotations

import re

import pytest

import helpers
from helpers.device import course_profile


def test_setup_line_names_the_profile_and_no_size(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = helpers.setup_notebook()
    printed = capsys.readouterr().out
    (line,) = [line for line in printed.splitlines() if line.startswith("profile:")]
    assert (
        line == f"profile: {chosen.name} (device {chosen.device}, precision {chosen.precision}) | seed {helpers.SEED}"
    )
    sizes = re.compile(r"\b(layers|train|epochs|lr|learning_rate|batch|max_length)\s*=")
    assert not sizes.search(printed), printed


@pytest.mark.parametrize("name", ["cpu"])
def test_no_size_of_the_profile_appears_in_the_line(name: str) -> None:
    chosen = course_profile(name)
    line = helpers.announcement(chosen, seed=7)
    for value in (chosen.num_layers, chosen.train_examples, chosen.num_train_epochs, chosen.learning_rate):
        assert f"={value}" not in line and f"={value:g}" not in line
    assert line.startswith(f"profile: {name} ") and line.endswith("| seed 7")
