"""``python -m tools.ladder history``: the readings of an old release's source, on small sources written here."""

from __future__ import annotations

import pytest

from check_old_code.release_facts import field_defaults, fields_set
from tools.ladder.history import history_versions, read_history, read_release
from tools.ladder.rungs import LadderError

ARGUMENTS = """
from dataclasses import dataclass, field

@dataclass
class TrainingArguments:
    output_dir: str = field(metadata={"help": "where"})
    fsdp: str = field(default="", metadata={"help": "sharding"})
    report_to: Optional[List[str]] = field(default=None)
    local_rank: int = -1
    label_names: List[str] = field(default_factory=list)

    def __post_init__(self):
        env_local_rank = int(os.environ.get("LOCAL_RANK", -1))
        if env_local_rank != -1:
            self.local_rank = env_local_rank
        self.fsdp = [s for s in self.fsdp.split()]
        self._n_gpu = 1
"""

TRAINER = """
class Trainer:
    def save_model(self, output_dir=None):
        self._save(output_dir)

    def _save(self, output_dir=None, *, state_dict=None, **kwargs):
        pass
"""


def test_the_defaults_are_read_as_written() -> None:
    assert field_defaults(ARGUMENTS) == {
        "output_dir": "<required>",
        "fsdp": "''",
        "report_to": "None",
        "local_rank": "-1",
        "label_names": "<factory>",
    }


def test_only_fields_that_the_class_assigns_itself_are_listed() -> None:
    assert fields_set(ARGUMENTS) == ["fsdp", "local_rank"]  # _n_gpu is no field


def test_a_release_entry_has_the_trainer_calls_and_methods() -> None:
    entry = read_release({"transformers/training_args.py": ARGUMENTS, "transformers/trainer.py": TRAINER}.get)
    assert entry["trainer_call_sites"] == {"_save": {"save_model": [[1, []]]}}
    assert entry["trainer_methods"]["_save"] == ["self", "output_dir=", "^state_dict=", "**kwargs"]
    assert entry["trainer_returns_discarded"] == ["_save"]  # called as a statement only


def test_the_history_takes_the_last_release_of_each_minor_before_the_ladder() -> None:
    listing = "transformers (5.24.0)\nAvailable versions: 5.24.0, 4.23.1, 4.22.2, 4.22.1, 4.3.0rc1, 4.3.3, 4.0.1, 3.5.1"
    assert history_versions(listing, "4.23.1") == ["4.0.1", "4.3.3", "4.22.2"]
    with pytest.raises(LadderError, match="no version list"):
        history_versions("nothing", "4.23.1")


def test_the_committed_history_reaches_back_to_4_0() -> None:
    history = read_history()
    assert history["releases"][0].startswith("4.0.") and history["releases"][-1].startswith("4.22.")
    assert history["results"]["4.2.2"]["trainer_call_sites"]["_save"] == {"save_model": [[1, []]]}
