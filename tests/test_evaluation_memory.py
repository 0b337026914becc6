"""Lesson 04, section 5 (evaluation memory), on exact sizes: what each way hands to compute_metrics.

The lesson measures peak memory on a 30,522-word head; here a tiny masked-LM checks the bytes themselves: full
logits reach ``compute_metrics`` whole (also with ``eval_accumulation_steps``), ``preprocess_logits_for_metrics``
shrinks them to class ids, and ``batch_eval_metrics`` hands over one batch at a time with the same result.
"""

from __future__ import annotations

from typing import Any

import datasets
import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, Trainer, TrainingArguments

from helpers.trainers import quiet

VOCAB, TOKENS, ROWS, BATCH = 300, 8, 12, 4


def _model() -> Any:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=VOCAB,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=TOKENS,
    )
    return BertForMaskedLM(config)


def _data() -> datasets.Dataset:
    rng = np.random.default_rng(0)
    ids = rng.integers(5, VOCAB, size=(ROWS, TOKENS))
    labels = ids.copy()
    labels[:, -2:] = -100  # padding is never scored
    return datasets.Dataset.from_dict({"input_ids": ids.tolist(), "labels": labels.tolist()})


def _evaluate(tmp_path: Any, compute_metrics: Any, preprocess: Any = None, **settings: Any) -> dict[str, float]:
    args = TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=BATCH, report_to="none", use_cpu=True, **settings
    )
    trainer = Trainer(
        model=_model(),
        args=args,
        eval_dataset=_data(),
        compute_metrics=compute_metrics,
        preprocess_logits_for_metrics=preprocess,
    )
    return quiet(trainer).evaluate()


def _token_accuracy(received: list[Any]) -> Any:
    def compute_metrics(eval_prediction: Any) -> dict[str, float]:
        received.append(eval_prediction.predictions)
        predicted = eval_prediction.predictions
        if predicted.ndim == 3:
            predicted = predicted.argmax(-1)
        scored = eval_prediction.label_ids != -100
        return {"token_accuracy": float((predicted[scored] == eval_prediction.label_ids[scored]).mean())}

    return compute_metrics


@pytest.mark.parametrize("settings", [{}, {"eval_accumulation_steps": 1}], ids=["default", "accumulation"])
def test_full_logits_reach_compute_metrics_whole(tmp_path: Any, settings: dict[str, Any]) -> None:
    received: list[Any] = []
    _evaluate(tmp_path, _token_accuracy(received), **settings)
    assert len(received) == 1 and received[0].shape == (ROWS, TOKENS, VOCAB)
    assert received[0].nbytes == ROWS * TOKENS * VOCAB * 4


def test_preprocess_logits_keeps_class_ids_only_and_the_same_accuracy(tmp_path: Any) -> None:
    full: list[Any] = []
    reduced: list[Any] = []
    expected = _evaluate(tmp_path, _token_accuracy(full))
    metrics = _evaluate(tmp_path, _token_accuracy(reduced), preprocess=lambda logits, labels: logits.argmax(dim=-1))
    assert reduced[0].shape == (ROWS, TOKENS) and reduced[0].nbytes == ROWS * TOKENS * 8
    assert metrics["eval_token_accuracy"] == expected["eval_token_accuracy"]


def test_batch_eval_metrics_hands_over_one_batch_at_a_time(tmp_path: Any) -> None:
    expected = _evaluate(tmp_path, _token_accuracy([]))
    shapes: list[tuple[int, ...]] = []
    flags: list[bool] = []
    counts = {"correct": 0, "total": 0}

    def streaming(eval_prediction: Any, compute_result: bool) -> dict[str, float]:
        logits, labels = eval_prediction.predictions, eval_prediction.label_ids
        shapes.append(tuple(logits.shape))
        flags.append(compute_result)
        scored = labels != -100
        counts["correct"] += int((logits.argmax(-1)[scored] == labels[scored]).sum())
        counts["total"] += int(scored.sum())
        return {"token_accuracy": counts["correct"] / counts["total"]} if compute_result else {}

    metrics = _evaluate(tmp_path, streaming, batch_eval_metrics=True)
    assert shapes == [(BATCH, TOKENS, VOCAB)] * (ROWS // BATCH)
    assert flags == [False] * (ROWS // BATCH - 1) + [True]
    assert metrics["eval_token_accuracy"] == pytest.approx(expected["eval_token_accuracy"])
