"""helpers.eval_runs: lesson 04's silent evaluation and its memory measurement, on a tiny model."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from datasets import Dataset
from transformers.modeling_outputs import SequenceClassifierOutput

from helpers.eval_runs import can_measure_host, evaluate_with, peak_extra_mib, peak_text


class Tiny(torch.nn.Module):
    main_input_name = "x"

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x, labels=None):
        logits = self.linear(x)
        loss = None if labels is None else torch.nn.functional.cross_entropy(logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits)


def data(n: int = 20) -> Dataset:
    rng = np.random.default_rng(0)
    return Dataset.from_dict(
        {"x": rng.normal(size=(n, 3)).astype("float32").tolist(), "labels": [i % 2 for i in range(n)]}
    )


def test_evaluate_with_calls_fn_once_with_all_rows(capsys):
    torch.manual_seed(0)
    seen = []

    def fn(prediction):
        seen.append(prediction)
        return {"rows": float(len(prediction.label_ids))}

    metrics = evaluate_with(fn, Tiny(), data(20), per_device_eval_batch_size=8)
    assert len(seen) == 1 and metrics["eval_rows"] == 20.0
    assert seen[0].predictions.shape == (20, 2)
    assert "eval_loss" in metrics
    assert "{'eval_" not in capsys.readouterr().out  # nothing printed


def test_evaluate_with_preprocess_shrinks_predictions():
    seen = []

    def fn(prediction):
        seen.append(prediction.predictions)
        return {}

    evaluate_with(fn, Tiny(), data(10), preprocess=lambda logits, labels: logits.argmax(-1))
    assert seen[0].shape == (10,)


def test_evaluate_with_rejects_unknown_setting():
    with pytest.raises(TypeError):
        evaluate_with(None, Tiny(), data(4), not_a_field=1)


def test_peak_extra_mib_sees_a_large_allocation():
    result, host, gpu = peak_extra_mib(lambda: np.ones(64 * 2**20 // 8).sum())
    assert result == 64 * 2**20 // 8
    if can_measure_host():
        assert host is not None and host > 50  # 64 MiB held during the call
    else:
        assert host is None
    assert gpu is None or gpu >= 0


def test_peak_extra_mib_rejects_non_callable():
    with pytest.raises(TypeError, match="function"):
        peak_extra_mib(3)


def test_peak_text():
    assert peak_text(476.6, None) == "peak RSS +477 MiB"
    assert peak_text(None, 12.0) == "RSS not measured | peak GPU 12 MiB"
