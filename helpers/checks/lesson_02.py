"""Exercises of lesson 02 (TrainingArguments). Each check trains or builds a tiny Trainer with your settings.

:func:`tiny_trainer` is the shared plumbing (lesson 03's checks use it too): the course model cut to the
profile's ``demo_layers``, a few dozen tokenized reviews, and ``TrainingArguments`` built from your dict.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any

from helpers.checks.core import Exercise, Wrong
from helpers.solutions import lesson_02 as solutions


@functools.lru_cache(maxsize=2)
def _model_and_data(num_layers: int | None = None) -> tuple[Any, Any, Any]:
    import helpers

    profile = helpers.course_profile()
    model, tokenizer = helpers.load_model_and_tokenizer(num_layers=num_layers or profile.demo_layers)
    data = helpers.tokenize_reviews(
        helpers.load_reviews(), tokenizer, profile.max_length, sizes={"train": 64, "validation": 32, "test": 8}
    )
    return model, tokenizer, data


def tiny_trainer(
    settings: Mapping[str, Any],
    fixed: Mapping[str, Any] | None = None,
    num_layers: int | None = None,
    **trainer_kwargs: Any,
) -> Any:
    """A Trainer on a fresh copy of the small course model and 64 training reviews (32 for evaluation).

    Args:
        settings: the learner's ``TrainingArguments`` keywords.
        fixed: keywords the check imposes on top (for example ``max_steps``).
        num_layers: encoder layers to keep (the profile's ``demo_layers`` by default).
        trainer_kwargs: passed to ``Trainer`` (``compute_metrics``, ``callbacks``).

    Raises:
        Wrong: ``settings`` is not a dict of keyword arguments.
    """
    from transformers import DataCollatorWithPadding, PrinterCallback, Trainer, TrainingArguments

    import helpers

    if not isinstance(settings, Mapping):
        raise Wrong(f"the answer should be a dict of TrainingArguments keywords, got {type(settings).__name__}.")
    model, tokenizer, data = _model_and_data(num_layers)
    base = {
        "output_dir": str(helpers.run_dir("checks_tiny")),
        "report_to": "none",
        "seed": 0,
        "save_strategy": "no",
        "logging_strategy": "no",
        **helpers.course_profile().precision_kwargs(),
    }
    args = TrainingArguments(**{**base, **dict(settings), **dict(fixed or {})})
    trainer = Trainer(
        model=copy.deepcopy(model),
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(tokenizer),
        **trainer_kwargs,
    )
    trainer.remove_callback(PrinterCallback)
    return trainer


def _check_batching(settings: Any) -> None:
    trainer = tiny_trainer(settings)
    forward_sizes: list[int] = []
    trainer.model.register_forward_pre_hook(
        lambda module, args, kwargs: forward_sizes.append(int(kwargs["input_ids"].shape[0])), with_kwargs=True
    )
    trainer.train()
    if max(forward_sizes) > 4:
        raise Wrong(
            f"{max(forward_sizes)} reviews went through the model at once; at most 4 may. "
            "Lower per_device_train_batch_size and make up the rest with gradient_accumulation_steps."
        )
    if trainer.state.global_step != 3:
        raise Wrong(
            f"the run made {trainer.state.global_step} optimizer updates, not 3. max_steps counts "
            "optimizer updates, not batches; num_train_epochs depends on the data size."
        )
    per_update = sum(forward_sizes) / trainer.state.global_step
    if per_update != 16:
        raise Wrong(
            f"each update used {per_update:g} reviews; the effective batch must be 16 "
            "(per_device_train_batch_size x gradient_accumulation_steps)."
        )


def _named_parameters_without_decay(model: Any) -> set[str]:
    trainer = tiny_trainer({"weight_decay": 0.01})
    trainer.model = model
    optimizer = trainer.create_optimizer()
    names = {id(parameter): name for name, parameter in model.named_parameters()}
    return {names[id(p)] for group in optimizer.param_groups if group["weight_decay"] == 0 for p in group["params"]}


def _check_no_decay(function: Any) -> None:
    if not callable(function):
        raise Wrong("the answer should be a function that takes a model and returns parameter names.")
    for num_layers in (1, 2):
        model = copy.deepcopy(_model_and_data(num_layers)[0])
        expected = _named_parameters_without_decay(model)
        answer = set(function(model))
        if answer != expected:
            missing, extra = sorted(expected - answer), sorted(answer - expected)
            raise Wrong(
                f"on a {num_layers}-layer model you missed {len(missing)} names (e.g. {missing[:2]}) and "
                f"added {len(extra)} that Trainer does decay (e.g. {extra[:2]}). Read the optimizer's "
                "param_groups: the group with weight_decay 0.0."
            )


def _accuracy(prediction: Any) -> dict[str, float]:
    return {"accuracy": float((prediction.predictions.argmax(-1) == prediction.label_ids).mean())}


def _check_best_model(settings: Any) -> None:
    trainer = tiny_trainer(
        settings, fixed={"max_steps": 6, "per_device_train_batch_size": 8}, compute_metrics=_accuracy
    )
    args = trainer.args
    if not args.load_best_model_at_end:
        raise Wrong("the best checkpoint is not loaded at the end: set load_best_model_at_end=True.")
    if args.metric_for_best_model not in ("accuracy", "eval_accuracy"):
        raise Wrong(
            f"the best model is chosen on {args.metric_for_best_model!r}, not on the eval accuracy "
            "(metric_for_best_model; the 'eval_' prefix is optional)."
        )
    if not args.greater_is_better:
        raise Wrong("greater_is_better is False, so the lowest accuracy would win.")
    trainer.train()
    evaluations = [
        (entry["step"], entry["eval_accuracy"]) for entry in trainer.state.log_history if "eval_accuracy" in entry
    ]
    if [step for step, _ in evaluations] != [2, 4, 6]:
        raise Wrong(f"evaluations ran at updates {[step for step, _ in evaluations]}, not every 2 updates (2, 4, 6).")
    kept = sorted(path.name for path in __import__("pathlib").Path(args.output_dir).glob("checkpoint-*"))
    if len(kept) > 2:
        raise Wrong(f"{len(kept)} checkpoints stayed on disk ({kept}); keep at most 2 with save_total_limit.")
    best_step = max(evaluations, key=lambda pair: pair[1])[0]
    if not str(trainer.state.best_model_checkpoint).endswith(f"checkpoint-{best_step}"):
        raise Wrong(
            f"the best accuracy came at update {best_step} but Trainer picked "
            f"{trainer.state.best_model_checkpoint}; save at every evaluation (same strategy and steps)."
        )


q1 = Exercise(
    name="02.1",
    answer_name="batching_settings",
    checker=_check_batching,
    hint_text="effective batch = per_device_train_batch_size x gradient_accumulation_steps; max_steps counts updates.",
    solution_obj=solutions.batching_settings,
    wrong_answers=solutions.WRONG_BATCHING,
)

q2 = Exercise(
    name="02.2",
    answer_name="names_without_decay",
    checker=_check_no_decay,
    hint_text="Trainer.get_decay_parameter_names excludes LayerNorm layers and names matching 'bias' or 'norm'.",
    solution_obj=solutions.names_without_decay,
    wrong_answers=solutions.WRONG_NO_DECAY,
)

q3 = Exercise(
    name="02.3",
    answer_name="best_model_settings",
    checker=_check_best_model,
    hint_text="save_strategy must match eval_strategy (and save_steps eval_steps); accuracy is better when greater.",
    solution_obj=solutions.best_model_settings,
    wrong_answers=solutions.WRONG_BEST_MODEL,
)
