"""Determinism: the first fine-tune (lesson 01's recipe, at a reduced size) gives identical metrics twice, and
notebooks do not depend on one another's output folders, so nbmake can run them in any order."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import helpers

ROOT = Path(__file__).resolve().parent.parent
TIMING_KEYS = ("runtime", "per_second")


def first_fine_tune(output_dir: Path) -> dict[str, float]:
    """Lesson 01's fine-tune (linear schedule, 10 % warmup, dynamic padding, accuracy and F1), made small."""
    from sklearn.metrics import f1_score
    from transformers import Trainer, TrainingArguments

    from helpers.models import load_model, load_tokenizer

    tokenizer = load_tokenizer()
    tokenized = helpers.tokenize_reviews(
        helpers.load_reviews(), tokenizer, 64, sizes={"train": 96, "validation": 64, "test": 1}
    )

    def compute_metrics(prediction: Any) -> dict[str, float]:
        predicted = prediction.predictions.argmax(axis=-1)
        return {
            "accuracy": float((predicted == prediction.label_ids).mean()),
            "f1": float(f1_score(prediction.label_ids, predicted)),
        }

    helpers.seed_everything(42)  # the new classification head is random: seed before building the model
    model = load_model(num_layers=2)
    args = TrainingArguments(
        output_dir=str(output_dir),
        num_train_epochs=1,
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        learning_rate=1e-4,
        warmup_steps=0.1,
        logging_steps=2,
        save_strategy="no",
        report_to="none",
        seed=42,
        use_cpu=True,
        disable_tqdm=True,
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"],
        processing_class=tokenizer,
        compute_metrics=compute_metrics,
    )
    result = trainer.train()
    metrics = {key: value for key, value in trainer.evaluate().items() if not key.endswith(TIMING_KEYS)}
    metrics["training_loss"] = result.training_loss
    metrics["logged_losses"] = [log["loss"] for log in trainer.state.log_history if "loss" in log]  # type: ignore[assignment]
    return metrics


@pytest.mark.slow
def test_first_fine_tune_is_reproducible(tmp_path: Path) -> None:
    first = first_fine_tune(tmp_path / "first")
    second = first_fine_tune(tmp_path / "second")
    assert first.keys() == second.keys() and {"eval_loss", "eval_accuracy", "eval_f1"} <= first.keys()
    for key in first:
        assert np.array_equal(first[key], second[key]), (
            f"{key} differs between two seeded runs ({first[key]} vs {second[key]}): something is not seeded"
        )


def run_dir_names(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return re.findall(r"run_dir\(\s*[\"']([^\"']+)[\"']", code)


NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.name for n in NOTEBOOKS])
def test_notebooks_use_their_own_output_folders(notebook: Path) -> None:
    """run_dir cleans its folder, so two notebooks sharing one would depend on the order they run in."""
    prefix = notebook.name[:3]
    foreign = [name for name in run_dir_names(notebook) if not name.startswith(prefix)]
    assert not foreign, f"{notebook.name} uses run_dir({foreign}); name its folders {prefix}..."
