"""`python -m check_old_code` on the kinds found on published packages' files (tests/check_old_code_corpus): each trap
is flagged, and the correct code next to it is left alone."""

from __future__ import annotations

from check_old_code import check_source
from check_old_code.trl_history import TRL_REMOVED_FIELDS

PARSE_DICT = """
from transformers import HfArgumentParser, TrainingArguments


def train(output_dir, device):
    parser = HfArgumentParser((TrainingArguments))
    settings = {{"output_dir": output_dir, "do_train": True}}
    settings["{cpu}"] = device == "cpu"
    settings["{strategy}"] = "steps"
    return parser.parse_dict(settings, allow_extra_keys={extra})[0]
"""


def test_parse_dict_with_extra_keys_allowed_drops_old_keys_without_a_word() -> None:
    source = PARSE_DICT.format(cpu="no_cuda", strategy="evaluation_strategy", extra=True)
    found = check_source(source)
    assert [(f.line, f.kind) for f in found] == [(8, "renamed-argument"), (9, "renamed-argument")]
    assert all("allow_extra_keys=True" in f.message and "silently" in f.message for f in found)
    assert "write the key 'use_cpu' in `settings`" in found[0].fix
    assert "write the key 'eval_strategy' in `settings`" in found[1].fix


def test_parse_dict_without_extra_keys_refuses_old_keys_and_new_keys_pass() -> None:
    refused = check_source(PARSE_DICT.format(cpu="no_cuda", strategy="evaluation_strategy", extra=False))
    assert [(f.line, f.kind) for f in refused] == [(8, "renamed-argument"), (9, "renamed-argument")]
    assert not any("silently" in f.message for f in refused)
    assert check_source(PARSE_DICT.format(cpu="use_cpu", strategy="eval_strategy", extra=True)) == []


BRANCHES = """
from transformers import TrainingArguments
from trl import RewardConfig


def build(reward, block_size):
    settings = dict(output_dir="out", eval_strategy="steps")
{before}    if reward:
{inside}        args = RewardConfig(**settings)
    else:
        args = TrainingArguments(**settings)
    return args
"""


def test_a_key_set_on_one_branch_is_judged_by_the_class_of_that_branch() -> None:
    inside = BRANCHES.format(before="", inside='        settings["max_length"] = block_size\n')
    assert check_source(inside) == []
    before = BRANCHES.format(before='    settings["max_length"] = block_size\n', inside="")
    found = check_source(before)
    assert [(f.line, f.kind) for f in found] == [(8, "unknown-argument")]
    assert "TrainingArguments has no `max_length`" in found[0].message


TRL_CONFIG = """
from trl import DPOConfig

config = DPOConfig(output_dir="out", beta=0.1, {keyword}=128)
"""


def test_a_field_removed_from_a_trl_config_is_not_called_a_typo() -> None:
    (found,) = check_source(TRL_CONFIG.format(keyword="max_prompt_length"))
    assert (found.line, found.kind) == (4, "removed-argument")
    assert "DPOConfig" in found.message and "removed from trl" in found.message and "typo" not in found.message
    (typo,) = check_source(TRL_CONFIG.format(keyword="max_promt_length"))
    assert typo.kind == "unknown-argument" and "typo" in typo.message
    assert check_source(TRL_CONFIG.format(keyword="max_length")) == []
    (renamed,) = check_source('from trl import SFTConfig\nSFTConfig(output_dir="o", max_seq_length=512)\n')
    assert (renamed.kind, renamed.fix) == ("renamed-argument", "max_length=512") and "trl renamed" in renamed.message


def test_the_trl_fields_recorded_as_removed_are_gone_from_the_installed_trl() -> None:
    import dataclasses

    import trl

    for name, removed in TRL_REMOVED_FIELDS.items():
        assert removed and not removed & {f.name for f in dataclasses.fields(getattr(trl, name))}, name


CALLBACK_TOKENIZER = """
from transformers import Trainer, TrainerCallback


class SaveAtEnd(TrainerCallback):
    def on_train_end(self, args, state, control, **kwargs):
        trainer = Trainer(args=args, model=kwargs.get("model"), {keyword}=kwargs.get("{key}"))
        trainer.save_model(args.output_dir)
"""


def test_the_fixes_for_a_tokenizer_read_from_callback_kwargs_read_processing_class() -> None:
    found = {f.kind: f for f in check_source(CALLBACK_TOKENIZER.format(keyword="tokenizer", key="tokenizer"))}
    assert sorted(found) == ["callback-tokenizer", "trainer-tokenizer"]
    assert found["trainer-tokenizer"].fix == 'processing_class=kwargs.get("processing_class")'
    assert found["callback-tokenizer"].fix == 'kwargs.get("processing_class")'
    fixed = CALLBACK_TOKENIZER.format(keyword="processing_class", key="processing_class")
    assert check_source(fixed) == []


def test_a_name_bound_to_one_arguments_class_or_another() -> None:
    source = """
from transformers import Seq2SeqTrainingArguments, TrainingArguments


def make(seq2seq):
    if seq2seq:
        arg_class = Seq2SeqTrainingArguments
    else:
        arg_class = TrainingArguments
    return arg_class(output_dir="out", {keyword}="steps")
"""
    found = check_source(source.format(keyword="evaluation_strategy"))
    assert [(f.line, f.kind) for f in found] == [(10, "renamed-argument")]
    assert check_source(source.format(keyword="eval_strategy")) == []


def test_keys_a_class_writes_into_a_dict_on_self() -> None:
    source = """
from transformers import Trainer, TrainingArguments


class Wrapper:
    def init_training_args(self):
        self.trainer_kwargs = {{}}
        self.trainer_kwargs["{strategy}"] = "epoch"
        self.trainer_kwargs["reward_model"] = None

    def train(self, output_dir):
        self.trainer_kwargs["output_dir"] = output_dir
        return Trainer(args=TrainingArguments(**self.trainer_kwargs))
"""
    found = check_source(source.format(strategy="evaluation_strategy"))
    assert [(f.line, f.kind) for f in found] == [(8, "renamed-argument")]
    assert "self.trainer_kwargs" in found[0].message
    assert check_source(source.format(strategy="eval_strategy")) == []


def test_dataclasses_replace_on_an_arguments_object() -> None:
    source = """
import dataclasses

from transformers import TrainingArguments


def prepare(args: TrainingArguments) -> TrainingArguments:
    return dataclasses.replace(args, {keyword}=True, remove_unused_columns=False)
"""
    found = check_source(source.format(keyword="include_inputs_for_metrics"))
    assert [(f.line, f.kind) for f in found] == [(8, "removed-argument")]
    assert "include_for_metrics" in found[0].fix
    assert check_source(source.format(keyword="eval_on_start")) == []


def test_an_attribute_read_after_a_hasattr_guard() -> None:
    source = """
from transformers import Trainer


class AmpTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        if {test}:
            return 0
        return super().training_step(model, inputs, num_items_in_batch)
"""
    assert check_source(source.format(test="hasattr(self, 'use_amp') and self.use_amp")) == []
    found = check_source(source.format(test="self.use_amp"))
    assert [(f.line, f.kind) for f in found] == [(7, "removed-attribute")]


def test_a_trl_trainer_given_args_through_a_dict_and_a_name_bound_on_branches() -> None:
    source = """
from transformers import TrainingArguments
from trl import DPOTrainer, RewardConfig, RewardTrainer


def build(reward, model, data):
    if reward:
        args = RewardConfig(output_dir="out")
    else:
        args = TrainingArguments(output_dir="out")
    common = dict(args=args, model=model)
    if reward:
        return RewardTrainer(**common, train_dataset=data)
    return DPOTrainer(**common, train_dataset=data)
"""
    (found,) = check_source(source)
    assert (found.line, found.kind) == (11, "trl-argument") and "`DPOTrainer(args=args)`" in found.message


def test_a_trainer_class_looked_up_by_type_and_called_under_isinstance() -> None:
    source = """
from transformers import TrainingArguments


class Task: ...
class ForSFT(Task): ...
class ForPPO(Task): ...


class Wrapper:
    def __init__(self, task):
        from trl import DPOTrainer, SFTTrainer

        self.task = task
        self.trainer_mapping = {{ForSFT: SFTTrainer, ForPPO: DPOTrainer}}
        self.trainer_cls = self.trainer_mapping[type(self.task)]
        self.trainer_kwargs = {{}}
        if isinstance(task, ForPPO):
            self.trainer_kwargs["config"] = None

    def train(self, model, tokenizer, data):
        if isinstance(self.task, ForSFT):
            return self.trainer_cls(model, args=TrainingArguments(output_dir="o"), train_dataset=data,
                                    {keyword}=tokenizer, **self.trainer_kwargs)
"""
    found = check_source(source.format(keyword="tokenizer"))
    assert [(f.line, f.kind) for f in found] == [(24, "trainer-tokenizer")]
    assert "SFTTrainer" in found[0].message
    assert check_source(source.format(keyword="processing_class")) == []


def test_code_under_type_checking_never_runs_and_is_not_judged() -> None:
    source = """
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trl import AutoModelForCausalLMWithValueHead
else:
    from trl import PPOConfig
{outside}
"""
    found = check_source(source.format(outside=""))
    assert [(f.line, f.kind) for f in found] == [(7, "removed-import")]
    outside = check_source(source.format(outside="from trl import AutoModelForCausalLMWithValueHead"))
    assert [(f.line, f.kind) for f in outside] == [(7, "removed-import"), (8, "removed-import")]
