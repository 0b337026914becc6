"""The 4.8.2 -> 5.x TrainingArguments map in check_old_code.old_arguments agrees with the installed transformers."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from check_old_code.old_arguments import (
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
    wheel_fields,
)

# The public fields of 4.8.2's TrainingArguments, read from the 4.8.2 wheel by `python -m tools.wheel_fields`
# (the file's header says how); the map must cover exactly these, in this order.
FIELDS_FILE = Path(__file__).parent / "data" / "training_arguments_4_8_2.txt"
FIELDS_4_8_2 = [line for line in FIELDS_FILE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]


def test_table_covers_exactly_the_4_8_2_fields() -> None:
    assert len(FIELDS_4_8_2) == 74 == len(set(FIELDS_4_8_2))
    assert list(TRAINING_ARGUMENTS_4_8_2) == FIELDS_4_8_2
    # the ones a hand-copied signature missed, which the checker used to call typos
    assert {"use_legacy_prediction_loop", "push_to_hub_model_id", "push_to_hub_organization"} <= set(FIELDS_4_8_2)
    assert fates_with_status(RENAMED)["push_to_hub_token"].new_name == "hub_token"


def test_wheel_fields_reads_the_dataclass_without_importing_it(tmp_path) -> None:
    source = (
        "from dataclasses import dataclass, field\n\n@dataclass\nclass TrainingArguments:\n"
        "    output_dir: str = field(metadata={})\n    _n_gpu: int = field(init=False, repr=False, default=-1)\n"
        "    cache: int = field(init=False, default=0)\n    seed: int = 42\n\n    def helper(self):\n        pass\n"
    )
    wheel = tmp_path / "transformers-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("transformers/training_args.py", source)
    assert wheel_fields(wheel) == ["output_dir", "seed"]
    with pytest.raises(ValueError, match="not a transformers wheel"):
        wheel_fields(tmp_path / "missing.whl")
    empty = tmp_path / "empty.whl"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("transformers/training_args.py", "x = 1\n")
    with pytest.raises(ValueError, match="no TrainingArguments class"):
        wheel_fields(empty)


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


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="`check_old_code.old_arguments` lists the renamed and removed ones, and `port_kwargs` ports a dict of them",
    covers=[
        "nine old arguments at once (renamed, removed, folded into optim)",
        "the ported dict builds TrainingArguments",
    ],
)
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
    """The ladder (docs/ladder/results.json) saw every renamed or removed name of the map go, on the way to the
    pinned release."""
    from check_old_code import ladder, ladder_removal

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
        assert went.startswith((" (gone since", " (gone by", " (the ladder never saw it")), (name, went)
        assert (name in seen) == went.startswith((" (gone since", " (gone by")), (name, went)
