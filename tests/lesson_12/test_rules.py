"""Lesson 12's rules (the capstone), tried beyond the lesson's run: imbalances of 1 in 10, 1 in 5 and 3 in 10, the
stock BERT classifier and TinyModel, a head built under different amounts of earlier random draws."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from rule_training import trainer
from sklearn.metrics import accuracy_score, f1_score
from tiny_training import TinyModel

from exercises.checks import fixtures

IMBALANCES = [(1, 10), (1, 5), (3, 10)]  # positives per reviews


@pytest.mark.rule(
    lesson="12",
    section="Recap",
    text="On imbalanced data accuracy rewards ignoring the rare class; score the minority class (F1, recall) instead.",
    covers=["1 in 10, 1 in 5 and 3 in 10 positive", "always negative against always positive"],
)
@pytest.mark.parametrize(("positives", "total"), IMBALANCES)
def test_accuracy_rewards_ignoring_the_rare_class(positives: int, total: int) -> None:
    labels = np.array([1] * positives * 10 + [0] * (total - positives) * 10)
    never, always = np.zeros_like(labels), np.ones_like(labels)
    assert accuracy_score(labels, never) > accuracy_score(labels, always)
    assert f1_score(labels, never, zero_division=0) == 0 < f1_score(labels, always)


def _class_gradients(model: Any, batch: dict[str, torch.Tensor], weights: torch.Tensor | None) -> tuple[float, float]:
    """The norm of the head's gradient from the positive reviews and from the negative ones, for the mean
    cross-entropy (weighted by class when ``weights`` is given)."""
    head = [p for name, p in model.named_parameters() if name.startswith(("classifier", "linear"))]
    norms = []
    for label in (1, 0):
        model.zero_grad()
        logits = model(**{k: v for k, v in batch.items() if k != "labels"})["logits"]
        per_review = torch.nn.functional.cross_entropy(logits, batch["labels"], weight=weights, reduction="none")
        mine = batch["labels"] == label
        share = per_review[mine].sum() / (weights[batch["labels"]].sum() if weights is not None else len(per_review))
        share.backward()
        norms.append(float(torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in head]))))
    return norms[0], norms[1]


@pytest.mark.rule(
    lesson="12",
    section="Recap",
    text="The plain mean loss lets the majority class dominate the gradient; class weights give the rare class a "
    "larger share.",
    covers=[
        "1 in 10, 1 in 5 and 3 in 10 positive",
        "8 TinyModel inits and the stock BERT classifier",
        "balanced weights total / (2 x count)",
    ],
)
@pytest.mark.parametrize(("positives", "total"), IMBALANCES)
@pytest.mark.parametrize("model", [*(f"tiny-{seed}" for seed in range(8)), "bert"])
def test_class_weights_rebalance_the_gradient(positives: int, total: int, model: str) -> None:
    rows = total * 4
    labels = torch.tensor([1] * positives * 4 + [0] * (total - positives) * 4)
    generator = torch.Generator().manual_seed(0)
    if model.startswith("tiny"):
        torch.manual_seed(int(model.split("-")[1]))  # TinyModel draws from torch's global generator
        built, batch = TinyModel(), {"x": torch.randn(rows, 4, generator=generator), "labels": labels}
    else:
        built = fixtures.tiny_model(seed=0)
        ids = torch.randint(1, 100, (rows, 10), generator=generator)
        batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}
    counts = torch.bincount(labels, minlength=2).float()
    balanced = rows / (2 * counts)
    plain_pos, plain_neg = _class_gradients(built, batch, None)
    weighted_pos, weighted_neg = _class_gradients(built, batch, balanced)
    assert plain_neg / plain_pos > 1  # the majority dominates (1.29 x to 17.6 x here)
    # A larger share, not parity: over 8 TinyModel inits the negatives' 1.29 x to 17.6 x became 0.53 x to 2.37 x;
    # at 3 in 10, init 2 went from 1.29 x to 0.55 x (the positives now dominate more than the negatives did), so
    # the recap's first wording, "rebalance it", failed here.
    assert weighted_neg / weighted_pos < plain_neg / plain_pos / 1.5


def _head_after(tmp_path: Any, route: str, draws: int) -> torch.Tensor:
    torch.manual_seed(123)
    torch.rand(draws)  # whatever ran before in the notebook

    def build() -> Any:
        from transformers import BertConfig, BertForSequenceClassification

        config = BertConfig(
            vocab_size=100,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
            num_labels=2,
        )
        return BertForSequenceClassification(config)

    settings = {"model_init": build} if route == "model_init" else {"model": build()}
    run = trainer(tmp_path, train_dataset=fixtures.random_ids(8), max_steps=1, learning_rate=0.0, **settings)
    run.train()
    return run.model.classifier.weight.detach().clone()


@pytest.mark.rule(
    lesson="12",
    section="Recap",
    text="build the model with `model_init` so the Trainer seeds its new head.",
    covers=["0, 1 and 1000 earlier random draws", "a model passed as model= (differs)"],
)
def test_model_init_seeds_the_new_head(tmp_path: Any) -> None:
    heads = [_head_after(tmp_path / f"init{draws}", "model_init", draws) for draws in (0, 1, 1000)]
    assert all(torch.equal(heads[0], head) for head in heads[1:])
    passed = [_head_after(tmp_path / f"model{draws}", "model", draws) for draws in (0, 1)]
    assert not torch.equal(passed[0], passed[1])
