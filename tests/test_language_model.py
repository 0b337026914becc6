"""helpers.language_model (lesson 18's task, tokenizer, model and instrument) and lesson 18's exported code, run on
drawn cases: the collator against TRL's SFTTrainer, and GenerationTrainer's predictions against greedy generation."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import Trainer, TrainingArguments
from trl import SFTConfig, SFTTrainer

from helpers.language_model import (
    ExactMatchCurve,
    complete,
    exact_match,
    majority_share,
    max_digit_dataset,
    max_digit_rows,
    tiny_llama,
    train_tokenizer,
)


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(max_digit_rows(500, seed=3))


def test_rows_are_seeded_and_right():
    rows = max_digit_rows(50, seed=7, digits=(2, 5))
    assert rows == max_digit_rows(50, seed=7, digits=(2, 5)) != max_digit_rows(50, seed=8, digits=(2, 5))
    for row in rows:
        digits = [int(d) for d in row["prompt"].removeprefix("max ").removesuffix(" =").split()]
        assert 2 <= len(digits) <= 5 and row["completion"] == f" {max(digits)}"


@pytest.mark.parametrize("count, digits", [(0, (3, 12)), (5, (0, 3)), (5, (6, 2))])
def test_bad_sizes_are_refused(count, digits):
    with pytest.raises(ValueError, match="count"):
        max_digit_rows(count, seed=0, digits=digits)


def test_tokenizer_keeps_the_prompt_a_prefix(tokenizer):
    assert (tokenizer.pad_token_id, tokenizer.eos_token_id) == (0, 1) and tokenizer.padding_side == "right"
    for row in max_digit_rows(30, seed=11):
        prompt = tokenizer(row["prompt"])["input_ids"]
        whole = tokenizer(row["prompt"] + row["completion"])["input_ids"]
        assert whole[: len(prompt)] == prompt and len(whole) == len(prompt) + 1
    with pytest.raises(ValueError, match="at least one text"):
        train_tokenizer([])


def test_tiny_llama_is_seeded_and_sized(tokenizer):
    one, two = tiny_llama(tokenizer, seed=4, hidden=32, layers=1), tiny_llama(tokenizer, seed=4, hidden=32, layers=1)
    assert one.config.num_hidden_layers == 1 and one.config.vocab_size == len(tokenizer)
    assert all(torch.equal(a, b) for a, b in zip(one.parameters(), two.parameters(), strict=True))


def test_complete_restores_the_tokenizer_and_the_mode(tokenizer):
    model = tiny_llama(tokenizer, seed=0, hidden=32, layers=1).train()
    answers = complete(model, tokenizer, ["max 1 2 =", "max 3 4 5 6 ="])
    assert len(answers) == 2 and all(isinstance(a, str) for a in answers)
    assert tokenizer.padding_side == "right" and model.training


def test_exact_match_and_baseline():
    assert exact_match(["9", " 8 "], [" 9", " 7"]) == 0.5
    assert majority_share([" 9", " 9", " 3", "9"]) == 0.75
    with pytest.raises(ValueError, match="as many answers"):
        exact_match(["1"], ["1", "2"])


def test_exact_match_curve_scores_at_start_and_every_k_steps(tokenizer, tmp_path):
    rows = max_digit_dataset(40, seed=5)
    curve = ExactMatchCurve(tokenizer, rows, every=2)
    from helpers.lessons.lesson_18 import CompletionOnlyCollator

    args = TrainingArguments(
        str(tmp_path), max_steps=4, per_device_train_batch_size=8, report_to="none", remove_unused_columns=False
    )
    model = tiny_llama(tokenizer, seed=0, hidden=32, layers=1)
    Trainer(
        model=model, args=args, train_dataset=rows, data_collator=CompletionOnlyCollator(tokenizer), callbacks=[curve]
    ).train()
    assert [step for step, _ in curve.points] == [0, 2, 4]
    assert curve.points[-1][1] == exact_match(complete(model, tokenizer, rows["prompt"]), rows["completion"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_lessons_collator_gives_sfttrainers_labels(tokenizer, tmp_path, seed):
    from helpers.lessons.lesson_18 import CompletionOnlyCollator

    rows = max_digit_dataset(24, seed=100 + seed, digits=(1, 15))
    sft = SFTTrainer(
        model=tiny_llama(tokenizer, seed=0, hidden=32, layers=1),
        args=SFTConfig(str(tmp_path), report_to="none", use_cpu=True, bf16=False),
        train_dataset=rows,
        processing_class=tokenizer,
    )
    picked = random.Random(seed).sample(range(24), 6)
    ours = CompletionOnlyCollator(tokenizer)([rows[i] for i in picked])
    theirs = sft.data_collator([sft.train_dataset[i] for i in picked])
    for key in ("input_ids", "attention_mask", "labels"):
        assert torch.equal(ours[key], theirs[key]), key
    unmasked = CompletionOnlyCollator(tokenizer, mask_prompt=False)([rows[i] for i in picked])
    assert torch.equal(unmasked["labels"], torch.where(ours["attention_mask"] == 1, ours["input_ids"], -100))


def test_generation_trainer_predicts_what_greedy_generation_says(tokenizer, tmp_path):
    from helpers.lessons.lesson_18 import CompletionOnlyCollator, GenerationTrainer

    rows = max_digit_dataset(37, seed=9)  # 37: the last eval batch is short
    model = tiny_llama(tokenizer, seed=2, hidden=32, layers=1)
    args = TrainingArguments(
        str(tmp_path), per_device_eval_batch_size=8, report_to="none", remove_unused_columns=False, use_cpu=True
    )
    trainer = GenerationTrainer(
        model=model, args=args, data_collator=CompletionOnlyCollator(tokenizer), processing_class=tokenizer
    )
    output = trainer.predict(rows)
    generated = torch.tensor(output.predictions)
    said = tokenizer.batch_decode(generated.clamp(min=0), skip_special_tokens=True)
    assert said == complete(model, tokenizer, rows["prompt"])
    assert "test_loss" in output.metrics and output.label_ids.shape[0] == 37
