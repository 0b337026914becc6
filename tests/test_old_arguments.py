"""The 4.8.2 -> 5.x TrainingArguments map in helpers.old_arguments agrees with the installed transformers."""

from __future__ import annotations

import pytest

from helpers.old_arguments import (
    KEPT,
    LATER_ARGUMENTS,
    REMOVED,
    RENAMED,
    TRAINING_ARGUMENTS_4_8_2,
    Fate,
    check_fates,
    fates_with_status,
    installed_field_names,
    port_kwargs,
)

# The 4.8.2 signature as the Convenient-Trainer guide prints it, written out independently of the table.
SIGNATURE_4_8_2 = """output_dir overwrite_output_dir do_train do_eval do_predict evaluation_strategy
prediction_loss_only
per_device_train_batch_size per_device_eval_batch_size per_gpu_train_batch_size per_gpu_eval_batch_size
gradient_accumulation_steps eval_accumulation_steps learning_rate weight_decay adam_beta1 adam_beta2 adam_epsilon
max_grad_norm num_train_epochs max_steps lr_scheduler_type warmup_ratio warmup_steps logging_dir logging_strategy
logging_first_step logging_steps save_strategy save_steps save_total_limit no_cuda seed fp16 fp16_opt_level
fp16_backend fp16_full_eval local_rank tpu_num_cores tpu_metrics_debug debug dataloader_drop_last eval_steps
dataloader_num_workers past_index run_name disable_tqdm remove_unused_columns label_names load_best_model_at_end
metric_for_best_model greater_is_better ignore_data_skip sharded_ddp deepspeed label_smoothing_factor adafactor
group_by_length length_column_name report_to ddp_find_unused_parameters dataloader_pin_memory skip_memory_metrics
mp_parameters""".split()


def test_table_covers_exactly_the_4_8_2_signature() -> None:
    assert len(SIGNATURE_4_8_2) == 64
    assert list(TRAINING_ARGUMENTS_4_8_2) == SIGNATURE_4_8_2


def test_table_agrees_with_installed_training_arguments() -> None:
    assert check_fates() == []
    assert check_fates(LATER_ARGUMENTS) == []


def test_check_fates_reports_a_wrong_entry() -> None:
    fields = installed_field_names() | {"warmup_ratio"}
    problems = check_fates(field_names=fields)
    assert problems == ["warmup_ratio: marked removed, but TrainingArguments still has it"]
    assert check_fates({"made_up": Fate(KEPT)}) == ["made_up: marked kept, but TrainingArguments has no such field"]
    assert "points to 'nowhere'" in check_fates({"x": Fate(RENAMED, "nowhere")})[0]


def test_statuses_partition_the_table() -> None:
    parts = [fates_with_status(status) for status in (KEPT, RENAMED, REMOVED)]
    assert sum(len(part) for part in parts) == len(TRAINING_ARGUMENTS_4_8_2)
    assert fates_with_status(RENAMED)["evaluation_strategy"].new_name == "eval_strategy"


def test_fate_rejects_incomplete_entries() -> None:
    with pytest.raises(ValueError, match="status"):
        Fate("gone")
    with pytest.raises(ValueError, match="new_name"):
        Fate(RENAMED)
    with pytest.raises(ValueError, match="note"):
        Fate(REMOVED)
    with pytest.raises(TypeError, match="Fate"):
        check_fates({"seed": "kept"})  # type: ignore[dict-item]


def test_port_kwargs_builds_valid_training_arguments(tmp_path) -> None:
    from transformers import TrainingArguments

    old = {
        "output_dir": str(tmp_path),
        "evaluation_strategy": "steps",
        "eval_steps": 5,
        "warmup_ratio": 0.1,
        "no_cuda": True,
        "adafactor": True,
        "group_by_length": True,
        "logging_dir": "logs",
        "per_gpu_train_batch_size": 4,
        "report_to": "none",
    }
    with pytest.raises(TypeError):
        TrainingArguments(**old)
    new, notes = port_kwargs(old)
    args = TrainingArguments(**new)
    assert args.eval_strategy == "steps" and args.use_cpu and args.optim == "adafactor"
    assert args.warmup_steps == 0.1 and args.per_device_train_batch_size == 4
    assert args.train_sampling_strategy == "group_by_length"
    assert any(note.startswith("dropped logging_dir") for note in notes)


def test_port_kwargs_rejects_unknown_and_clashing_names() -> None:
    with pytest.raises(ValueError, match="spelling"):
        port_kwargs({"learnin_rate": 1e-3})
    with pytest.raises(ValueError, match="two arguments"):
        port_kwargs({"per_gpu_train_batch_size": 4, "per_device_train_batch_size": 8})


def test_map_agrees_with_the_release_ladder() -> None:
    """The ladder (docs/ladder/results.json) saw every renamed or removed name of the map go, on the way to 5.24."""
    from helpers.check_old_code import ladder, ladder_removal

    data = ladder()
    assert data["releases"], "docs/ladder/results.json is missing: run `make ladder`"
    newest = set(data["results"][data["releases"][-1]]["inventory"]["training_arguments"])
    seen = {name for v in data["releases"] for name in data["results"][v]["inventory"]["training_arguments"]}
    for name, fate in {**TRAINING_ARGUMENTS_4_8_2, **LATER_ARGUMENTS}.items():
        if fate.status == KEPT:
            assert name in newest, name
            continue
        assert name not in newest, name
        went = ladder_removal(name)
        assert went.startswith((" (gone since", " (the ladder never saw it")), (name, went)
        assert (name in seen) == went.startswith(" (gone since"), (name, went)
