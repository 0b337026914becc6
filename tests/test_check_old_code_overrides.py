"""`python -m check_old_code` judges a Trainer or callback override by how the installed Trainer calls it: by
keyword or not at all, handed on as a function, a new helper nothing calls, super calls, moved positional arguments."""

from __future__ import annotations

from old_code_findings import kinds as _kinds

import check_old_code
from check_old_code import check_source


def test_overrides_the_trainer_calls_by_keyword_or_not_at_all_pass() -> None:
    source = """
from transformers import Trainer

class QA(Trainer):
    def evaluate(self, eval_dataset=None, eval_examples=None, ignore_keys=None, metric_key_prefix="eval"):
        return {}

    def predict(self, test_dataset, test_examples, ignore_keys=None):
        return None

class OldQA(Trainer):
    def evaluate(self, eval_dataset=None, eval_examples=None, ignore_keys=None):
        return {}
"""
    # QA: keywords only, and the Trainer never calls self.predict. OldQA lacks metric_key_prefix, which every
    # release on the ladder passes for a dict of eval sets: not something 5.x changed.
    assert _kinds(source) == []


def test_a_method_handed_on_as_a_function_is_judged_by_how_it_is_called() -> None:
    source = """
from transformers import Trainer

class Sampled(Trainer):
    def _get_train_sampler(self):
        return None

class Fine(Trainer):
    def _get_train_sampler(self, train_dataset=None):
        return None
"""
    found = check_source(source)
    assert [(f.line, f.kind) for f in found] == [(5, "method-signature")]
    assert "self._get_train_sampler(train_dataset)" in found[0].message
    assert [1, []] in check_old_code.installed_calls()["_get_train_sampler"]  # sampler_fn(dataset)


def test_a_new_helper_is_only_suspicious_when_nothing_calls_it() -> None:
    source = """
from transformers import Trainer

class Helpful(Trainer):
    def mc_evaluate(self):
        return self.evaluation_loop

    def evaluation_step(self, model, inputs):
        return 0

    def run(self):
        return self.mc_evaluate(), self.evaluation_step(None, None)

class Typo(Trainer):
    def compute_los(self, model, inputs):
        return 0
"""
    assert _kinds(source) == [(15, "missing-method")]


def test_a_subclass_named_trainer_is_a_trainer() -> None:
    source = """
import transformers

class Trainer(transformers.Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return 0
"""
    assert _kinds(source) == [(5, "compute-loss-signature")]


def test_super_calls_and_super_init_are_checked() -> None:
    source = """
from transformers import Trainer

class Saver(Trainer):
    def __init__(self, *args, tokenizer=None, **kwargs):
        super().__init__(*args, tokenizer=tokenizer, **kwargs)

    def _save_checkpoint(self, model, trial, metrics=None):
        super()._save_checkpoint(model, trial, metrics)

class Fine(Trainer):
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
"""
    found = {finding.line: finding for finding in check_source(source)}
    assert sorted((line, f.kind) for line, f in found.items()) == [(6, "trainer-tokenizer"), (9, "call-signature")]
    assert "_save_checkpoint(model, trial)" in found[9].fix


def test_positional_trainer_arguments_that_moved() -> None:
    source = """
from transformers import Trainer

ok = Trainer(model, args, collator, train_set, eval_set, tokenizer)
moved = Trainer(model, args, collator, train_set, eval_set, tokenizer, None, compute_metrics)
"""
    found = check_source(source)
    assert [(f.line, f.kind) for f in found] == [(5, "trainer-positional")]
    assert "`compute_metrics` on the 4.x Trainer" in found[0].message and "`compute_loss_func`" in found[0].message
