"""Exercises of lesson 13 (reading real subclasses). Each check trains the learner's subclass for real, with gradient
accumulation, a sequential sampler (so it knows every micro-batch), data and a learning rate drawn at check time,
and compares every logged value with its own computation on the same weights, made before each optimizer step."""

from __future__ import annotations

import random
from typing import Any

import torch

from exercises.checks import fixtures
from exercises.checks.by_hand import ByHand, close, evaluation_values, training_windows
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_13 as solutions

CHECK_SEED = 1313
TINY_LLAMA = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
# TRL turns activation checkpointing on by default; not needed here. The sampler is sequential: known batches.
QUIET_SFT = dict(report_to="none", save_strategy="no", use_cpu=True, disable_tqdm=True, activation_checkpointing=False)
QUIET_SFT.update(train_sampling_strategy="sequential")


def _train_and_compare(trainer: Any, measure: Any, key: str, what: str, eval_rows: int) -> None:
    """Train with a :class:`ByHand` callback, evaluating every step or two between the training logs; each training
    log's ``key`` must be the mean over the micro-batches since the previous training log, and each evaluation log's
    ``eval_<key>`` the mean over that evaluation's batches, both read from ``state.log_history``."""
    hand = ByHand(trainer.get_train_dataloader(), measure, trainer.get_eval_dataloader())
    trainer.add_callback(hand)
    fixtures.train(trainer, "training (and evaluating every step or two) with your subclass")
    history = trainer.state.log_history
    evaluated = [entry["step"] for entry in history if "eval_loss" in entry]
    for entry, count, want in training_windows(history, hand.train):
        got = entry.get(key)
        if got is None:
            raise Wrong(
                f"the training log at step {entry['step']} (the one with 'loss') has no '{key}' column: add it to the "
                "logs dict in log() before the Trainer's own log() writes it; a self.log() call inside compute_loss "
                "writes rows of its own, one per micro-batch, instead."
            )
        if not close(got, want[key]):
            raise Wrong(
                f"at step {entry['step']} your '{key}' is {got!r}; {what} of the {count} training micro-batches since "
                f"the previous training log is {want[key]:.5f} (the run also evaluated, at steps {evaluated}). Note "
                "each training micro-batch's value apart from evaluation's, log their mean, then start again."
            )
    for number, (entry, want) in enumerate(evaluation_values(history, hand.evaluations), start=1):
        got = entry.get(f"eval_{key}")
        if not close(got, want[key]):
            said = "has no such column" if got is None else f"says {got!r}"
            raise Wrong(
                f"evaluation {number} of {len(evaluated)} (at step {entry['step']}, between training logs) "
                f"{said} in its log, eval_{key}; {what} of its {eval_rows} batches is {want[key]:.5f}. In evaluation "
                f"(self.model.training is False) note the values apart from training's, merge their mean as "
                f"eval_{key}, and start again for the next evaluation."
            )


def _mean(name: str, value: Any) -> dict[str, tuple[float, float]]:
    return {name: (float(value), 1.0)}


def _accuracy(model: Any, batch: dict[str, Any]) -> dict[str, tuple[float, float]]:
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return _mean("batch_accuracy", (logits.argmax(-1) == batch["labels"]).float().mean())


def _schedule(rng: random.Random, max_steps: int) -> dict[str, Any]:
    """A training log every 2 or 3 steps (and at step 1), an evaluation every 1 or 2 steps: evaluations fall between
    two training logs and at steps with one."""
    logging_steps = rng.choice([2, 3])
    eval_steps = rng.choice([step for step in (1, 2) if step != logging_steps])
    return dict(max_steps=max_steps, logging_steps=logging_steps, logging_first_step=True, eval_steps=eval_steps)


def _check_accuracy_trainer(answer: Any) -> None:
    from transformers import Trainer

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"MyAccuracyLoggingTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    rng = random.Random(CHECK_SEED)
    first, second = rng.randint(2, 5), rng.randint(10, 13)  # positives in rows 0-15 and in rows 16-31
    labels = [int(i < first) for i in range(16)] + [int(i < second) for i in range(16)]
    data = fixtures.random_ids(32, seed=rng.randrange(100, 1000)).remove_columns("labels").add_column("labels", labels)
    held_out = fixtures.random_ids(12, seed=rng.randrange(100, 1000))
    steps = dict(per_device_train_batch_size=4, per_device_eval_batch_size=4, gradient_accumulation_steps=2)
    steps.update(train_sampling_strategy="sequential", save_strategy="no", eval_strategy="steps", **_schedule(rng, 6))
    settings = dict(learning_rate=round(rng.uniform(3e-3, 9e-3), 6), **steps)  # windows with different label mixes
    trainer = fixtures.trainer(settings, trainer_class=answer, train_dataset=data, eval_dataset=held_out)
    _train_and_compare(trainer, _accuracy, "batch_accuracy", "the mean accuracy", eval_rows=3)


def _check_length_sft_trainer(answer: Any) -> None:
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import SFTConfig, SFTTrainer

    from helpers.data import load_reviews
    from helpers.models import load_tokenizer
    from helpers.trainers import quiet

    if not (isinstance(answer, type) and issubclass(answer, SFTTrainer)):
        raise Wrong(f"MyLengthSFTTrainer must be a class that subclasses trl.SFTTrainer, got {answer!r}.")
    rng = random.Random(CHECK_SEED + 1)
    tokenizer = load_tokenizer()  # its own copy: the shared one keeps no end-of-text token
    tokenizer.eos_token = "[SEP]"
    texts = load_reviews()["train"]["text"]
    config = LlamaConfig(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **TINY_LLAMA)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(config)
    steps = dict(per_device_train_batch_size=2, per_device_eval_batch_size=4, gradient_accumulation_steps=2)
    steps.update(eval_strategy="steps", **_schedule(rng, 4))  # 4 steps: the causal LM's vocabulary costs time
    learning_rate = round(rng.uniform(1e-3, 5e-3), 6)
    args = SFTConfig(fixtures.scratch_dir(), learning_rate=learning_rate, **steps, **QUIET_SFT)
    chosen = rng.sample(range(len(texts)), 24)
    data = Dataset.from_dict({"text": [texts[i] for i in chosen[:16]]})
    held_out = Dataset.from_dict({"text": [texts[i] for i in chosen[16:]]})
    with learner_code("creating your MyLengthSFTTrainer"):
        trainer = answer(model=model, args=args, train_dataset=data, eval_dataset=held_out, processing_class=tokenizer)

    def tokens(model: Any, batch: dict[str, Any]) -> dict[str, tuple[float, float]]:
        return _mean("tokens_per_sequence", batch["attention_mask"].sum(dim=1).float().mean())

    what = "the mean number of real tokens per sequence (attention_mask summed over each sequence)"
    _train_and_compare(quiet(trainer), tokens, "tokens_per_sequence", what, eval_rows=2)


q1 = Exercise(
    answer_name="MyAccuracyLoggingTrainer",
    checker=_check_accuracy_trainer,
    hint_text=(
        "Note each micro-batch's accuracy in compute_loss, apart for training and for evaluation (the model's mode "
        "says which), and in log() merge each mode's mean into that mode's log, then start that mode again. The "
        "training log is the one with 'loss'; evaluations come between them."
    ),
    solution_obj=solutions.MyAccuracyLoggingTrainer,
)

q2 = Exercise(
    answer_name="MyLengthSFTTrainer",
    checker=_check_length_sft_trainer,
    hint_text=(
        "SFTTrainer already keeps a list of numbers per mode and merges their means into the logs: in compute_loss "
        "add yours to the list of the mode the model is in, and let the parent compute the loss."
    ),
    solution_obj=solutions.MyLengthSFTTrainer,
)

bind_exercises(globals())
