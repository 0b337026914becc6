"""Exercises of lesson 07 (custom losses). Each check runs the learner's code with what a real Trainer passes (real
model outputs, a real Trainer, on one process and then on two) and judges the logged loss and gradient norm:
batch 4 x accumulation 2 must log what batch 8 x accumulation 1 logs, and two processes of batch 4 what one
process of batch 8 logs. The label mixes and the data are drawn at check time from the check's own seed."""

from __future__ import annotations

import random
from typing import Any

import torch
import torch.nn.functional as F

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.checks.processes import two_processes
from exercises.solutions import lesson_07 as solutions

GAMMA = 2.0
CHECK_SEED = 707  # the check's own cases, different from anything the lesson shows


def _label_mixes(rng: random.Random) -> list[list[int]]:
    """Two label mixes of 8 reviews with different numbers of positives (never 4: equal weights)."""
    mixes = []
    for positives in rng.sample([1, 2, 3, 5, 6, 7], 2):
        labels = [1] * positives + [0] * (8 - positives)
        rng.shuffle(labels)
        mixes.append(labels)
    return mixes


def _data(labels: list[int], seed: int) -> Any:
    return fixtures.random_ids(8, seed=seed).remove_columns("labels").add_column("labels", labels)


def _first_log(trainer: Any) -> dict[str, float]:
    return fixtures.train(trainer, "training with your loss").state.log_history[0]


def _same(a: float, b: float, rel: float = 1e-4) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def _compare_runs(make: Any, reference: float, what: str) -> dict[str, float]:
    """Batch 8 x 1 must log ``reference``; batch 4 x 2 the same loss and grad_norm. Returns batch 8's log."""
    big = _first_log(make(per_device_train_batch_size=8))
    accumulating = make(per_device_train_batch_size=4, gradient_accumulation_steps=2)
    small = _first_log(accumulating)
    if not _same(big["loss"], reference):
        raise Wrong(f"{what}: batch 8 x 1 logged loss {big['loss']:.5f}, the expected loss is {reference:.5f}.")
    if not (_same(big["loss"], small["loss"]) and _same(big["grad_norm"], small["grad_norm"])):
        logged = (
            f"{what}: batch 4 x accumulation 2 logged loss {small['loss']:.5f} and grad_norm {small['grad_norm']:.5f}, "
            f"batch 8 x 1 logged {big['loss']:.5f} and {big['grad_norm']:.5f}."
        )
        if not _loss_is_scaled_for_ga(accumulating):
            raise Wrong(
                f"{logged} Your Trainer averages the micro-batches' losses (loss_is_scaled_for_ga is off), so each "
                "must be the mean over its own reviews, sum(weight[label] * CE) / number of reviews. A weighted mean "
                "divides by the sum of the weights instead (F.cross_entropy(weight=w) does), and that sum changes "
                "with each micro-batch's labels: weight with reduction='none', then take .mean()."
            )
        raise Wrong(
            f"{logged} Divide the summed loss by num_items_in_batch when it is given, or return a per-batch mean "
            "and set loss_is_scaled_for_ga = False."
        )
    return big


def _loss_is_scaled_for_ga(trainer: Any) -> bool:
    """Whether ``trainer`` takes its loss as already scaled for accumulation, decided as Trainer.training_step
    decides it (transformers 5.x): the ``loss_is_scaled_for_ga`` attribute when set, else
    ``model_accepts_loss_kwargs`` (num_items_in_batch is given while training) or a ``compute_loss_func``."""
    flag = getattr(trainer, "loss_is_scaled_for_ga", None)
    if flag is not None:
        return bool(flag)
    return bool(trainer.model_accepts_loss_kwargs) or trainer.compute_loss_func is not None


def _loss_and_norm(trainer: Any) -> tuple[float, float]:
    log = trainer.state.log_history[0]
    return log["loss"], log["grad_norm"]


def _two_processes(make: Any) -> tuple[float, float]:
    """The loss and grad_norm logged by a real 2-process run (each process batch 4: the same global batch of 8)."""
    return two_processes(make, _loss_and_norm)[0]


def _compare_processes(make: Any, single: dict[str, float], what: str, rule: str) -> None:
    loss, grad_norm = _two_processes(make)
    if not (_same(loss, single["loss"]) and _same(grad_norm, single["grad_norm"])):
        ratio = loss / single["loss"]
        raise Wrong(
            f"{what}: on 2 processes of batch 4 your loss logged {loss:.5f} and grad_norm {grad_norm:.5f}; one "
            f"process of batch 8 logged {single['loss']:.5f} and {single['grad_norm']:.5f} (ratio {ratio:.2f}). " + rule
        )


# ---- 07.1 ----

PROCESS_RULE_TRAINER = (
    "On several processes num_items_in_batch counts the items of all of them and DDP averages the gradients: "
    "multiply sum / num_items_in_batch by self.accelerator.num_processes when args.average_tokens_across_devices "
    "is on (lesson 07, section 5), and never divide by it."
)


def _check_balanced_trainer(answer: Any) -> None:
    from transformers import Trainer

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"MyBalancedTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    rng = random.Random(CHECK_SEED)
    learning_rate = round(rng.uniform(2e-4, 8e-4), 6)
    single = None
    for case, labels in enumerate(_label_mixes(rng)):
        data, counts = _data(labels, seed=case + 3), torch.bincount(torch.tensor(labels), minlength=2).float()
        weights = len(labels) / (2 * counts)
        batch = fixtures.batch(data, 8)
        with torch.no_grad():
            logits = fixtures.tiny_model()(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        reference = float(
            (F.cross_entropy(logits, batch["labels"], reduction="none") * weights[batch["labels"]]).mean()
        )
        what = f"{sum(labels)} positives in 8 reviews (weights {weights[0]:.3f}, {weights[1]:.3f})"

        def make(data: Any = data, **settings: Any) -> Any:
            settings.update(max_steps=1, logging_steps=1, save_strategy="no", learning_rate=learning_rate)
            return fixtures.trainer(settings, trainer_class=answer, train_dataset=data)

        trainer = make(per_device_eval_batch_size=8)
        with learner_code(
            "evaluating with your Trainer (prediction_step calls compute_loss(..., return_outputs=True))"
        ):
            evaluated = trainer.evaluate(eval_dataset=data)["eval_loss"]
        if not _same(evaluated, reference):
            raise Wrong(
                f"{what}: evaluation gives loss {evaluated:.5f}, the balanced weighted cross-entropy is "
                f"{reference:.5f}. Weight class c by N / (2 * count_c), counted on train_dataset['labels']; sum "
                "weight[label] * CE over the reviews and divide by their number."
            )
        single = _compare_runs(make, reference, what), make, what
    big, make, what = single
    _compare_processes(make, big, what, PROCESS_RULE_TRAINER)


# ---- 07.2 ----

PROCESS_RULE_FUNC = (
    "A compute_loss_func returns sum / num_items_in_batch with no factor for processes: Trainer.compute_loss "
    "multiplies its result by the number of processes itself (lesson 07, section 5)."
)


def _focal_reference(logits: torch.Tensor, labels: torch.Tensor, count: float) -> float:
    log_p = F.log_softmax(logits.float(), dim=-1).gather(1, labels[:, None]).squeeze(1)
    return float((-((1 - log_p.exp()) ** GAMMA) * log_p).sum() / count)


def _confident_model() -> Any:
    """The tiny classifier with its head scaled by 20: confident predictions, where focal and CE differ."""
    model = fixtures.tiny_model(seed=2)
    with torch.no_grad():
        model.classifier.weight.mul_(20)
        model.classifier.bias.mul_(20)
    return model


def _check_focal_func(answer: Any) -> None:
    if not callable(answer) or isinstance(answer, type):
        raise Wrong(
            f"my_focal_loss_func must be a function (outputs, labels, num_items_in_batch=None), got {answer!r}."
        )
    rng = random.Random(CHECK_SEED + 1)
    data = fixtures.random_ids(8, seed=rng.randrange(10, 1000))
    batch, model = fixtures.batch(data, 8), _confident_model()
    for rows, items in ((8, None), (5, torch.tensor(rng.randrange(9, 20)))):
        outputs = model(input_ids=batch["input_ids"][:rows], attention_mask=batch["attention_mask"][:rows])
        labels = batch["labels"][:rows]
        count = float(items) if items is not None else rows
        expected = _focal_reference(outputs.logits.detach(), labels, count)
        shown = None if items is None else int(items)
        with learner_code(
            f"calling your function on the model's outputs (a {type(outputs).__name__}) for {rows} reviews "
            f"with num_items_in_batch={shown}"
        ):
            got = answer(outputs, labels, num_items_in_batch=items)
        if not torch.is_tensor(got):
            raise Wrong(
                f"the function must return the loss as a tensor (the Trainer calls .backward() on it), got "
                f"{type(got).__name__}."
            )
        if got.numel() != 1:
            raise Wrong(
                f"your function returned {got.numel()} numbers (shape {tuple(got.shape)}), one loss per review: "
                "sum the per-review focal losses and divide by num_items_in_batch (or by the batch size when it "
                "is None), so it returns one number."
            )
        got = got.detach()
        if not _same(float(got), expected):
            plain = float(F.cross_entropy(outputs.logits.detach(), labels, reduction="sum")) / count
            raise Wrong(
                f"on {rows} reviews with num_items_in_batch={shown} your loss is {float(got):.5f}, the focal loss "
                f"(gamma 2) summed and divided by {'the batch size' if items is None else 'num_items_in_batch'} is "
                f"{expected:.5f}."
                + (
                    " That is plain cross-entropy: multiply each review's CE by (1 - p_true) ** 2."
                    if _same(float(got), plain)
                    else ""
                )
            )
    learning_rate = round(rng.uniform(2e-4, 8e-4), 6)
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    reference = _focal_reference(logits, batch["labels"], 8)

    def make(**settings: Any) -> Any:
        settings.update(max_steps=1, logging_steps=1, save_strategy="no", learning_rate=learning_rate)
        return fixtures.trainer(settings, model=_confident_model(), train_dataset=data, compute_loss_func=answer)

    big = _compare_runs(make, reference, "in a Trainer with compute_loss_func")
    _compare_processes(make, big, "in a Trainer with compute_loss_func", PROCESS_RULE_FUNC)


# ---- 07.3 ----

Z_WEIGHT = 0.1  # the exercise's weight of the z-loss
PARTS = ("loss_ce", "loss_z")


def _parts(model: Any, batch: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The two parts of one micro-batch, each its mean over the reviews (counted once per micro-batch), and
    ``z_of_mean``, the z-loss reduced the wrong way round (the square of the batch mean of logsumexp)."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.float()
    log_sum_exp = torch.logsumexp(logits, dim=-1)
    z_loss = Z_WEIGHT * log_sum_exp.pow(2).mean()
    z_of_mean = Z_WEIGHT * log_sum_exp.mean().pow(2)
    return {
        "loss_ce": (float(F.cross_entropy(logits, batch["labels"])), 1.0),
        "loss_z": (float(z_loss), 1.0),
        "z_of_mean": (float(z_of_mean), 1.0),
    }


def _spread_model() -> Any:
    """The tiny classifier with its head scaled by 100: logsumexp(logits) varies from review to review, so that the
    mean of its squares and the square of its mean differ by far more than the check's tolerance."""
    model = fixtures.tiny_model(seed=2)
    with torch.no_grad():
        model.classifier.weight.mul_(100)
        model.classifier.bias.mul_(100)
    return model


def parts_schedule(rng: random.Random) -> dict[str, Any]:
    """Accumulation 2 or 3; a training log at step 1 and every 2 or 3 steps after it (windows of different lengths);
    an evaluation every 1 or 2 steps, between two training logs; two epochs of 3 steps."""
    logging_steps = rng.choice([2, 3])
    eval_steps = rng.choice([step for step in (1, 2) if step != logging_steps])
    return dict(
        gradient_accumulation_steps=rng.choice([2, 3]),
        max_steps=6,
        logging_steps=logging_steps,
        logging_first_step=True,
        eval_strategy="steps",
        eval_steps=eval_steps,
    )


def _check_parts_trainer(answer: Any) -> None:
    from transformers import Trainer

    from exercises.checks.by_hand import ByHand, close, training_windows

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"ZLossPartsTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    rng = random.Random(CHECK_SEED + 2)
    schedule = parts_schedule(rng)
    rows = 4 * schedule["gradient_accumulation_steps"] * 3  # 3 steps an epoch
    settings = dict(per_device_train_batch_size=4, per_device_eval_batch_size=4, train_sampling_strategy="sequential")
    settings.update(save_strategy="no", learning_rate=round(rng.uniform(5e-3, 2e-2), 6), **schedule)
    data = fixtures.random_ids(rows, seed=rng.randrange(100, 1000))
    trainer = fixtures.trainer(
        settings,
        model=_spread_model(),
        trainer_class=answer,
        train_dataset=data,
        eval_dataset=fixtures.random_ids(8, seed=rng.randrange(99)),
    )
    hand = ByHand(trainer.get_train_dataloader(), _parts)
    trainer.add_callback(hand)
    fixtures.train(trainer, "training (and evaluating every step or two) with your Trainer")
    history = trainer.state.log_history
    evaluated = [entry["step"] for entry in history if "eval_loss" in entry]
    accumulation = schedule["gradient_accumulation_steps"]
    for entry, count, want in training_windows(history, hand.train):
        missing = [name for name in PARTS if name not in entry]
        if missing:
            raise Wrong(
                f"the training log at step {entry['step']} (the one with 'loss') has no {missing} column: add the "
                "parts to the logs dict in log() before the Trainer's own log() writes it; a self.log() call inside "
                "compute_loss writes rows of its own, one per micro-batch, at the step before."
            )
        if not abs(want["loss_z"] - want["z_of_mean"]) > 20 * 1e-5 * max(1.0, abs(want["loss_z"])):
            raise RuntimeError(f"the check's batches do not tell the two reductions of the z-loss apart: {want}")
        if close(entry["loss_z"], want["z_of_mean"]):
            raise Wrong(
                f"at step {entry['step']} your 'loss_z' is {entry['loss_z']:.5f}, 0.1 times the square of the batch "
                f"mean of logsumexp(logits); the exercise's z-loss is the mean over the reviews of 0.1 * "
                f"logsumexp(logits) ** 2 ({want['loss_z']:.5f}): square each review's logsumexp, then average."
            )
        for name in PARTS:
            if not close(entry[name], want[name]):
                raise Wrong(
                    f"at step {entry['step']} your {name!r} is {entry[name]!r}; its mean over the {count} training "
                    f"micro-batches since the previous training log ({count // accumulation} steps x accumulation "
                    f"{accumulation}) is {want[name]:.5f} (the run also evaluated, at steps {evaluated}). Note each "
                    "training micro-batch's parts (not evaluation's), log their mean, then start again."
                )
        total = want["loss_ce"] + want["loss_z"]
        if not close(entry["loss"], total, rel=1e-4):
            ratio = entry["loss"] / total
            raise Wrong(
                f"at step {entry['step']} the Trainer logged loss {entry['loss']:.5f}, but your parts add up to "
                f"{total:.5f} (ratio {ratio:.2f}, accumulation {accumulation}): train on loss_ce + loss_z, and "
                "since both are micro-batch means tell the Trainer so (section 5), or it adds them up over the "
                "accumulation."
            )


q1 = Exercise(
    answer_name="MyBalancedTrainer",
    checker=_check_balanced_trainer,
    hint_text=(
        "Weights from the counts of the training labels ('balanced': N over twice a class's count). The loss sums "
        "each review's weighted cross-entropy and divides by the Trainer's count of items when it gives one, by the "
        "batch size when not; section 5 says what several processes need, and an evaluation asks for the outputs too."
    ),
    solution_obj=solutions.MyBalancedTrainer,
)

q2 = Exercise(
    answer_name="my_focal_loss_func",
    checker=_check_focal_func,
    hint_text=(
        "outputs is the model's SequenceClassifierOutput. Focal loss scales each review's cross-entropy by (1 - p) to"
        " the power gamma, p the probability of the true class; sum over the reviews and divide by "
        "num_items_in_batch, or by the batch size when it is None. No factor for processes: the Trainer applies it to"
        " a compute_loss_func."
    ),
    solution_obj=solutions.my_focal_loss_func,
)

q3 = Exercise(
    answer_name="ZLossPartsTrainer",
    checker=_check_parts_trainer,
    hint_text=(
        "Two places, as in LossPartsTrainer: compute_loss only notes each training micro-batch's parts (detached, "
        "and not during an evaluation), and an overridden log adds their means to the training log, then starts "
        "again. A self.log call inside compute_loss writes a row per micro-batch instead. Both parts are "
        "micro-batch means: section 5 says what the Trainer must be told about such a loss."
    ),
    solution_obj=solutions.ZLossPartsTrainer,
)

bind_exercises(globals())
