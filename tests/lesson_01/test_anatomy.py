"""Lesson 01's many-case proofs, moved out of the notebook: the collator the Trainer picks pads every batch to
that batch's longest review (not to max_length) and names the labels ``labels``; a plain function is a valid
``data_collator`` in the Trainer's own DataLoader; a ``compute_loss_func`` of plain cross-entropy gives the
model's own loss on every batch. The notebook shows one batch of each and asserts that one in a tucked cell."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, default_data_collator

from exercises.checks import fixtures

MAX_LENGTH = 64


@pytest.fixture(scope="module")
def reviews():
    return fixtures.reviews(count=256, max_length=MAX_LENGTH)


@pytest.fixture(scope="module")
def model():
    return fixtures.tiny_model(seed=1, vocab_size=fixtures.tokenizer().vocab_size).eval()


@pytest.fixture
def args(tmp_path):
    return TrainingArguments(
        str(tmp_path), report_to="none", per_device_train_batch_size=8, seed=7, dataloader_pin_memory=False
    )


@pytest.mark.rule(
    lesson="01",
    section="Recap",
    text="Tokenize once without padding; the collator pads each batch to its longest review.",
    covers=["batches of 1, 2, 5, 8, 16 and 32 reviews", "random batches of the real reviews"],
)
def test_the_picked_collator_pads_each_batch_to_its_own_longest_review(reviews, model, args) -> None:
    chosen = Trainer(model=model, args=args, processing_class=fixtures.tokenizer()).data_collator
    assert isinstance(chosen, DataCollatorWithPadding)
    assert Trainer(model=model, args=args).data_collator is default_data_collator
    rng = random.Random(11)
    widths = set()
    for size in (1, 2, 5, 8, 16, 32):
        rows = [reviews[i] for i in rng.sample(range(len(reviews)), size)]
        lengths = [len(row["input_ids"]) for row in rows]
        batch = chosen(rows)
        assert batch["input_ids"].shape == (size, max(lengths)), "not padded to this batch's longest review"
        assert batch["attention_mask"].sum(dim=1).tolist() == lengths
        assert "labels" in batch and "label" not in batch
        assert batch["labels"].tolist() == [row["label"] for row in rows]
        widths.add(max(lengths))
    assert len(widths) > 1 and min(widths) < MAX_LENGTH, "the batches did not differ in width"


@pytest.mark.rule(
    lesson="01",
    section="Recap",
    text="A plain function is a valid collator if its batch carries `labels`.",
    covers=["the Trainer's own shuffled DataLoader", "6 batches", "a function without labels (no loss)"],
)
def test_a_plain_function_is_a_collator_when_its_batch_carries_labels(reviews, model, args) -> None:
    tokenizer = fixtures.tokenizer()

    def pad_and_label(rows):
        batch = tokenizer.pad([{k: v for k, v in r.items() if k != "label"} for r in rows], return_tensors="pt")
        batch["labels"] = torch.tensor([r["label"] for r in rows])
        return batch

    def pad_only(rows):
        return tokenizer.pad(rows, return_tensors="pt")

    own = Trainer(model=model, args=args, data_collator=pad_and_label, train_dataset=reviews)
    naive = Trainer(model=model, args=args, data_collator=pad_only, train_dataset=reviews)
    for batch, naive_batch, _ in zip(own.get_train_dataloader(), naive.get_train_dataloader(), range(6)):
        with torch.no_grad():
            assert model(**batch).loss is not None
            assert model(**{k: v for k, v in naive_batch.items() if k != "label"}).loss is None
        assert "label" in naive_batch and "labels" not in naive_batch


@pytest.mark.rule(
    lesson="01",
    section="7. Your own metrics",
    text="Plain cross-entropy must reproduce the model's own loss on a batch",
    covers=["batches of 1, 3, 8 and 16 reviews", "padding that differs per batch"],
)
def test_cross_entropy_as_compute_loss_func_is_the_models_own_loss(reviews, model, args) -> None:
    def cross_entropy_loss(outputs, labels, num_items_in_batch=None):
        return torch.nn.functional.cross_entropy(outputs.logits, labels)

    tokenizer = fixtures.tokenizer()
    trainer = Trainer(model=model, args=args, compute_loss_func=cross_entropy_loss, processing_class=tokenizer)
    collate = trainer.data_collator
    rng = random.Random(5)
    for size in (1, 3, 8, 16):
        batch = collate([reviews[i] for i in rng.sample(range(len(reviews)), size)])
        with torch.no_grad():
            assert torch.allclose(model(**batch).loss, trainer.compute_loss(model, dict(batch)), atol=1e-6)
