"""helpers/release_facts.py: the one description of a release that the ladder's probes and the checker share."""

from __future__ import annotations

import inspect

import transformers.training_args as training_args

from helpers import release_facts
from tools import ladder


def test_choices_of_the_installed_release() -> None:
    choices = release_facts.argument_choices(training_args, {"optim", "save_strategy", "warmup_ratio"})
    assert set(choices) == {"optim", "save_strategy"}  # fields the release lacks are left out
    assert "adamw_torch" in choices["optim"] and "adamw_hf" not in choices["optim"]
    assert choices["save_strategy"] == sorted(choices["save_strategy"]) and "best" in choices["save_strategy"]


def test_describe_writes_each_kind_of_parameter() -> None:
    def f(a, b=1, *rest, c, d=2, **more): ...

    assert [release_facts.describe(p) for p in inspect.signature(f).parameters.values()] == [
        "a",
        "b=",
        "*rest",
        "^c",
        "^d=",
        "**more",
    ]


def test_the_probes_load_this_module_by_path() -> None:
    probes = ladder.load_probes()
    assert probes.RELEASE_FACTS.__file__ == release_facts.__file__
    assert probes.argument_choices() == release_facts.argument_choices(training_args, probes.field_names())
