"""Exercises of lesson 13 (reading real subclasses). Each check trains the learner's subclass for real, with gradient
accumulation, a sequential sampler (so it knows every micro-batch), data and a learning rate drawn at check time,
and compares every logged value with its own computation on the same weights, made before each optimizer step."""

from __future__ import annotations

import random
from typing import Any

import torch
from transformers import TrainerCallback

from helpers.checks import fixtures
from helpers.checks.core import Exercise, Wrong, bind_exercises, learner_code
from helpers.solutions import lesson_13 as solutions

CHECK_SEED = 1313
TINY_LLAMA = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2)
# TRL turns activation checkpointing on by default; not needed here. The sampler is sequential: known batches.
QUIET_SFT = dict(report_to="none", save_strategy="no", use_cpu=True, disable_tqdm=True, activation_checkpointing=False)
QUIET_SFT.update(train_sampling_strategy="sequential")


class _ByHand(TrainerCallback):
    """Before each optimizer step, ``measure(model, batch)`` for each of its micro-batches, read in order from
    ``batches`` (the Trainer's own sequential loader), noted with the step."""

    def __init__(self, batches: Any, measure: Any) -> None:
        self.batches, self.measure, self.values = iter(batches), measure, []

    @torch.no_grad()
    def on_step_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        for _ in range(args.gradient_accumulation_steps):
            batch = {key: value.to(model.device) for key, value in next(self.batches).items()}
            self.values.append((state.global_step, self.measure(model, batch)))


def _train_and_compare(trainer: Any, measure: Any, key: str, what: str) -> None:
    """Train with a _ByHand callback; each training log's ``key`` must be the mean of the values since the last log."""
    hand = _ByHand(trainer.get_train_dataloader(), measure)
    trainer.add_callback(hand)
    fixtures.train(trainer, "training with your subclass")
    start = 0
    for entry in (entry for entry in trainer.state.log_history if "loss" in entry):
        window = [value for step, value in hand.values if start <= step < entry["step"]]
        want, got, start = sum(window) / len(window), entry.get(key), entry["step"]
        if got is None:
            raise Wrong(
                f"the training log at step {entry['step']} (the one with 'loss') has no '{key}' column: add it to the "
                "logs dict in log() before super().log(logs, start_time); a self.log() call inside compute_loss "
                "writes rows of its own, one per micro-batch, instead."
            )
        if abs(got - want) > 1e-5 * max(1.0, abs(want)):
            raise Wrong(
                f"at step {entry['step']} your '{key}' is {got:.5f}; {what} of the {len(window)} micro-batches since "
                f"the previous log is {want:.5f}. Note each micro-batch's value, log their mean, then start again."
            )


def _accuracy(model: Any, batch: dict[str, Any]) -> float:
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return float((logits.argmax(-1) == batch["labels"]).float().mean())


def _check_accuracy_trainer(answer: Any) -> None:
    from transformers import Trainer

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"MyAccuracyLoggingTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    rng = random.Random(CHECK_SEED)
    first, second = rng.randint(2, 5), rng.randint(10, 13)  # positives in rows 0-15 and in rows 16-31
    labels = [int(i < first) for i in range(16)] + [int(i < second) for i in range(16)]
    data = fixtures.random_ids(32, seed=rng.randrange(100, 1000)).remove_columns("labels").add_column("labels", labels)
    steps = dict(per_device_train_batch_size=4, per_device_eval_batch_size=4, gradient_accumulation_steps=2)
    steps.update(max_steps=4, logging_steps=2, train_sampling_strategy="sequential", save_strategy="no")
    settings = dict(learning_rate=round(rng.uniform(3e-3, 9e-3), 6), **steps)  # windows with different label mixes
    trainer = fixtures.trainer(settings, trainer_class=answer, train_dataset=data)
    _train_and_compare(trainer, _accuracy, "batch_accuracy", "the mean accuracy")
    held_out = data.select(range(4, 16))
    with learner_code("evaluating with your Trainer (prediction_step calls compute_loss(..., return_outputs=True))"):
        got = trainer.evaluate(eval_dataset=held_out).get("eval_batch_accuracy")
    with torch.no_grad():
        batches = [fixtures.batch(held_out.select(range(i, i + 4)), 4) for i in (0, 4, 8)]
        want = sum(_accuracy(trainer.model.eval(), batch) for batch in batches)
    if got is None or abs(got - want / 3) > 1e-5:
        raise Wrong(
            f"evaluate() gave eval_batch_accuracy {got}; the mean accuracy of its 3 batches is {want / 3:.5f}. In "
            "evaluation (self.model.training is False) note the values apart from training's and merge their mean "
            "as eval_batch_accuracy."
        )


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
    steps = dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, max_steps=2, logging_steps=1)
    learning_rate = round(rng.uniform(1e-3, 5e-3), 6)
    args = SFTConfig(fixtures.scratch_dir(), learning_rate=learning_rate, **steps, **QUIET_SFT)
    data = Dataset.from_dict({"text": [texts[i] for i in rng.sample(range(len(texts)), 16)]})
    with learner_code("creating your MyLengthSFTTrainer"):
        trainer = quiet(answer(model=model, args=args, train_dataset=data, processing_class=tokenizer))
    tokens = lambda model, batch: float(batch["attention_mask"].sum(dim=1).float().mean())  # noqa: E731
    what = "the mean number of real tokens per sequence (attention_mask summed over each sequence)"
    _train_and_compare(trainer, tokens, "tokens_per_sequence", what)


q1 = Exercise(
    answer_name="MyAccuracyLoggingTrainer",
    checker=_check_accuracy_trainer,
    hint_text=(
        "In __init__ keep a list per mode ('train', 'eval'). In compute_loss call super().compute_loss(model, inputs, "
        "return_outputs=True, num_items_in_batch=num_items_in_batch), append (outputs.logits.argmax(-1) == "
        "inputs['labels']).float().mean().item() to the list of the mode (self.model.training), return what was "
        "asked. In log(logs, start_time=None): put the mode's mean into logs['batch_accuracy'] (or "
        "logs['eval_batch_accuracy']), clear the list, then super().log(logs, start_time)."
    ),
    solution_obj=solutions.MyAccuracyLoggingTrainer,
)

q2 = Exercise(
    answer_name="MyLengthSFTTrainer",
    checker=_check_length_sft_trainer,
    hint_text=(
        "In compute_loss: mode = 'train' if self.model.training else 'eval'; append "
        "inputs['attention_mask'].sum(dim=1).float().mean().item() to self._metrics[mode]['tokens_per_sequence']; "
        "return super().compute_loss(model, inputs, return_outputs=return_outputs, "
        "num_items_in_batch=num_items_in_batch)."
    ),
    solution_obj=solutions.MyLengthSFTTrainer,
)

bind_exercises(globals())
