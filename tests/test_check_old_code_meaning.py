"""``check_old_code`` on code whose names still exist but whose meaning changed (issue 61): values
(``report_to=None``, ``args.local_rank == 0``, ``len(args.fsdp)``), hooks the installed Trainer never calls, a
file's own ``self.`` calls of inherited methods, changes older than the ladder (read from the 4.x wheels), and
errors swallowed by ``except Exception``. Each family has a trap and correct code that is left alone.
"""

from __future__ import annotations

from check_old_code import check_source
from check_old_code.ladder_results import history, old_default, old_releases_setting


def _kinds(source: str) -> list[tuple[int, str]]:
    return sorted((finding.line, finding.kind) for finding in check_source(source))


def _messages(source: str) -> dict[int, str]:
    return {finding.line: f"{finding.message}\n{finding.fix}" for finding in check_source(source)}


def test_the_history_before_the_ladder_is_read_from_the_wheels() -> None:
    assert history()["releases"][0].startswith("4.0.")
    assert old_default("report_to") == ("None", history()["releases"][-1])
    assert old_default("fsdp")[0] == "''"
    assert "4.10.3" in old_releases_setting("local_rank")


# -- values whose meaning changed ----------------------------------------------------------------------------------
def test_report_to_none_is_refused_now_and_none_as_a_string_is_not() -> None:
    source = """
from transformers import TrainingArguments

def build(config):
    TrainingArguments("out", report_to=None)
    TrainingArguments("out", report_to=["wandb"] if config.wandb else None)
    TrainingArguments("out", report_to="none")
    TrainingArguments("out", report_to=["tensorboard"] if config.tb else "none")
"""
    assert _kinds(source) == [(5, "changed-value"), (6, "changed-value")]
    message = _messages(source)[5]
    assert "ValueError" in message and 'report_to="none"' in message


def test_a_local_rank_test_is_reported_and_the_process_index_is_not() -> None:
    source = """
from transformers import Trainer, TrainingArguments

def main(model, args: TrainingArguments):
    trainer = Trainer(model=model, args=args)
    trainer.train()
    if args.local_rank == 0:
        trainer.save_model()
    distributed = args.local_rank != -1
    level = "info" if args.local_rank in [-1, 0] else "warn"
    if args.process_index == 0 and args.world_size > 1:
        trainer.save_model()
    if trainer.is_world_process_zero():
        trainer.save_model()
    rank = args.local_rank
    print(f"rank {args.local_rank}")
"""
    assert _kinds(source) == [(7, "changed-value"), (9, "changed-value"), (10, "changed-value")]
    message = _messages(source)[7]
    assert "stays -1" in message and "process_index == 0" in message and "4.22.2" in message


def test_len_of_fsdp_is_reported_and_a_truth_test_is_not() -> None:
    source = """
from transformers import TrainingArguments

def setup(training_args: TrainingArguments):
    if len(training_args.fsdp) > 0:
        pass
    if training_args.fsdp:
        pass
    if len(training_args.label_names or []) > 1:
        pass
"""
    assert _kinds(source) == [(5, "changed-value")]
    assert "defaults to None" in _messages(source)[5] and "if training_args.fsdp:" in _messages(source)[5]


# -- hooks the installed Trainer never calls ------------------------------------------------------------------------
def test_an_override_of_a_hook_no_longer_called_is_reported() -> None:
    source = """
from transformers import Trainer

class Old(Trainer):
    def create_optimizer_and_scheduler(self, num_training_steps):
        self.create_optimizer()

class New(Trainer):
    def create_optimizer(self, model=None):
        return super().create_optimizer(model)
"""
    assert _kinds(source) == [(5, "uncalled-method")]
    assert "never calls" in _messages(source)[5] and "create_optimizer and create_scheduler" in _messages(source)[5]


def test_a_hook_the_file_calls_itself_is_left_alone() -> None:
    source = """
from transformers import Trainer

class CallsItItself(Trainer):
    def create_optimizer_and_scheduler(self, num_training_steps):
        self.create_optimizer()

    def train(self, *args, **kwargs):
        self.create_optimizer_and_scheduler(10)
        return super().train(*args, **kwargs)
"""
    assert _kinds(source) == []


# -- a file's own self. calls of inherited methods ------------------------------------------------------------------
def test_a_self_call_of_an_inherited_method_is_judged_like_super() -> None:
    source = """
from transformers import Trainer

class T(Trainer):
    def save_everything(self):
        self._save_checkpoint(self.model, trial=None, metrics=None)
        self._save_checkpoint(self.model, None)
        self.helper(1, 2, 3)

    def helper(self, a):
        return a
"""
    assert _kinds(source) == [(6, "call-signature")]
    assert "inherited from Trainer" in _messages(source)[6]


# -- changes older than the ladder ----------------------------------------------------------------------------------
def test_a_change_before_4_23_is_found_in_the_history() -> None:
    source = """
from transformers import Trainer

class Old(Trainer):
    def _save(self, output_dir=None):
        self.model.save(output_dir)

class New(Trainer):
    def _save(self, output_dir=None, state_dict=None):
        self.model.save(output_dir)
"""
    assert _kinds(source) == [(5, "method-signature")]
    assert "4.3.3 still called it" in _messages(source)[5]


# -- errors swallowed by a broad handler -----------------------------------------------------------------------------
def test_except_exception_does_not_make_a_finding_expected_but_a_named_error_does() -> None:
    source = """
from transformers import Trainer

class Swallows(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        try:
            if self.use_apex:
                pass
        except Exception:
            return None

class Expects(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        try:
            if self.use_apex:
                pass
        except AttributeError:
            return None
"""
    assert _kinds(source) == [(7, "removed-attribute")]


# -- self.args of an arguments class from elsewhere -----------------------------------------------------------------
def test_fields_of_an_arguments_class_from_elsewhere_are_not_judged() -> None:
    source = """
from transformers import Trainer

class Examples(Trainer):
    def sampler(self):
        if self.args.sortish_sampler and self.args.adafactor:
            return None

class Plain(Trainer):
    def optimizer(self):
        return self.args.adafactor
"""
    # sortish_sampler was never a TrainingArguments field: Examples' args class declares its own (adafactor too)
    assert _kinds(source) == [(11, "removed-attribute")]


# -- fix texts that used to mislead ----------------------------------------------------------------------------------
def _fixes(source: str) -> dict[int, str]:
    return {finding.line: finding.fix for finding in check_source(source)}


def test_grpo_max_prompt_length_is_a_removed_trl_field_not_a_typo() -> None:
    source = """
from trl import GRPOConfig
GRPOConfig(output_dir="x", max_prompt_length=256)
"""
    (finding,) = check_source(source)
    assert finding.kind == "removed-argument" and "typo" not in finding.message
    assert "0.20.0's GRPOConfig" in finding.message
    assert "max_completion_length" not in finding.fix and "dataset" in finding.fix


def test_the_deepspeed_module_import_names_where_it_went() -> None:
    fixes = _fixes("""
from transformers import Trainer, deepspeed
from transformers.deepspeed import is_deepspeed_zero3_enabled
""")
    assert "from transformers.integrations import deepspeed" in fixes[2]
    assert "transformers.integrations.deepspeed" in fixes[3] and "is_deepspeed_zero3_enabled" in fixes[3]


def test_mixed_precision_attributes_are_not_to_be_set_by_hand() -> None:
    fixes = _fixes("""
from transformers import Trainer

class T(Trainer):
    def step(self, loss):
        if self.use_apex or self.use_amp:
            self.scaler.scale(loss).backward()
""")
    for line in (6, 7):
        assert "set it yourself in __init__" not in fixes[line] and "only hides the error" in fixes[line]
    assert "self.accelerator.backward(loss)" in fixes[7]


def test_a_warmup_ratio_the_file_reads_itself_is_handed_on_not_deleted() -> None:
    fixes = _fixes("""
from dataclasses import dataclass, field
import transformers

@dataclass
class TrainingArguments(transformers.TrainingArguments):
    warmup_ratio: float = field(default=0.03)

def steps(training_args: TrainingArguments, total: int) -> int:
    return int(training_args.warmup_ratio * total)
""")
    assert "delete the field" not in fixes[7] and "warmup_steps" in fixes[7] and "own reads" in fixes[7]


# -- an override that returns nothing where the Trainer now uses the result ------------------------------------------
def test_a_remove_unused_columns_override_returning_nothing_is_reported() -> None:
    source = """
from transformers import Trainer

class InPlace(Trainer):
    def _remove_unused_columns(self, dataset, description=None):
        dataset.set_format(columns=["input_ids", "labels"])

class Returns(Trainer):
    def _remove_unused_columns(self, dataset, description=None):
        return super()._remove_unused_columns(dataset, description)

class Logs(Trainer):
    def log(self, logs, start_time=None):
        super().log(logs, start_time)
"""
    assert _kinds(source) == [(5, "method-return")]
    assert "returns nothing" in _messages(source)[5] and "4.5.1" in _messages(source)[5]


# -- a branch that the installed release never enters ----------------------------------------------------------------
def test_reads_inside_a_branch_guarded_by_a_gone_attribute_are_left_alone() -> None:
    source = """
from transformers import Trainer

class Guarded(Trainer):
    def step(self, loss):
        if (hasattr(self, "use_amp") and self.use_amp) or (hasattr(self, "use_cuda_amp") and self.use_cuda_amp):
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

class Unguarded(Trainer):
    def step(self, loss):
        if hasattr(self, "model") and self.model:
            self.scaler.scale(loss).backward()
"""
    # Guarded's branch needs use_amp or use_cuda_amp, which 5.x's Trainer has neither of: it never runs
    assert _kinds(source) == [(14, "removed-attribute")]
