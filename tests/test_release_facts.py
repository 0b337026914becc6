"""check_old_code/release_facts.py: the one description of a release that the ladder's probes and the checker share."""

from __future__ import annotations

import ast
import inspect

import transformers.training_args as training_args

from check_old_code import release_facts
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


def test_enum_members_by_name() -> None:
    members = release_facts.enum_members(training_args)
    assert members["OptimizerNames"]["ADAMW_TORCH"] == "adamw_torch"
    assert members["OptimizerNames"]["ADAMW_BNB"] == "adamw_bnb_8bit"  # a name is not always its value in capitals
    assert "ADAMW_HF" not in members["OptimizerNames"]
    assert set(members) >= {"OptimizerNames", "SchedulerType", "IntervalStrategy", "SaveStrategy", "HubStrategy"}


def test_self_call_sites_name_the_calling_method() -> None:
    tree = ast.parse(
        """
class T:
    def training_step(self, model, inputs, n):
        def closure():
            return self.compute_loss(model, inputs, num_items_in_batch=n)
        return closure()

    def prediction_step(self, model, inputs):
        self.compute_loss(model, inputs, return_outputs=True)
        self.compute_loss(model, inputs, return_outputs=True)
        self.compute_loss(*inputs)
"""
    )
    assert release_facts.self_call_sites(tree) == {
        "compute_loss": {
            "training_step": [[2, ["num_items_in_batch"]]],  # the closure's call is the method's
            "prediction_step": [[2, ["return_outputs"]]],  # once; the call that unpacks is left out
        }
    }


def test_the_probes_read_call_sites_and_members_as_the_checker_does() -> None:
    from transformers import Trainer

    import check_old_code

    probes = ladder.load_probes()
    assert probes.enum_members() == release_facts.enum_members(training_args)
    assert probes.trainer_call_sites()["compute_loss"] == check_old_code._call_sites(Trainer)["compute_loss"]
