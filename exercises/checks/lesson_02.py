"""Exercises of lesson 02 (TrainingArguments). Each check trains or builds a tiny Trainer with your settings."""

from __future__ import annotations

import inspect
import random
from pathlib import Path
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_02 as solutions


def _check_batching(settings: Any) -> None:
    # A dataset size drawn when the check runs, so that an answer tuned to one size (a fraction of an epoch that
    # happens to give 3 updates) fails: "exactly 3 updates" must hold whatever the data.
    rows = random.Random(21).randint(100, 160)
    trainer = fixtures.trainer(settings, train_dataset=fixtures.random_ids(rows, seed=21))
    sizes: list[int] = []
    trainer.model.register_forward_pre_hook(
        lambda module, args, kwargs: sizes.append(int(kwargs["input_ids"].shape[0])), with_kwargs=True
    )
    fixtures.train(trainer, "training with your settings")
    if max(sizes) > 4:
        raise Wrong(
            f"{max(sizes)} reviews went through the model at once; at most 4 may. "
            "Lower per_device_train_batch_size and make up the rest with gradient_accumulation_steps."
        )
    if trainer.state.global_step != 3:
        raise Wrong(
            f"the run made {trainer.state.global_step} optimizer updates, not 3 (on {rows} reviews). max_steps "
            "counts optimizer updates, not batches; num_train_epochs depends on the data size."
        )
    if sum(sizes) != 16 * 3:
        raise Wrong(
            f"each update used {sum(sizes) / 3:g} reviews; the effective batch must be 16 "
            "(per_device_train_batch_size x gradient_accumulation_steps)."
        )


def _check_no_decay(function: Any) -> None:
    from transformers import GPT2Config, GPT2ForSequenceClassification

    if not callable(function):
        raise Wrong("the answer should be a function that takes a model and returns parameter names.")
    try:
        inspect.signature(function).bind(None)
    except TypeError as error:
        raise Wrong(
            f"the check calls names_without_decay(model), and your function cannot take that ({error})."
        ) from None
    except ValueError:  # no signature to read (a builtin): the call itself will tell
        pass
    # Depths drawn when the check runs (seeded here), so a list of names written out for fixed models fails.
    rng = random.Random(22)
    shallow, deep = rng.sample(range(1, 5), 2)
    gpt2_layers = rng.randint(1, 3)
    gpt2 = GPT2ForSequenceClassification(
        GPT2Config(
            n_embd=16, n_layer=gpt2_layers, n_head=2, vocab_size=50, n_positions=16, bos_token_id=0, eos_token_id=0
        )
    )
    for label, model in (
        (f"{shallow}-layer BERT", fixtures.tiny_model(layers=shallow)),
        (f"{deep}-layer BERT", fixtures.tiny_model(layers=deep)),
        (f"{gpt2_layers}-layer GPT-2 (LayerNorms named ln_1, ln_2, ln_f)", gpt2),
    ):
        optimizer = fixtures.trainer({"weight_decay": 0.05}, model=model).create_optimizer()
        names = {id(parameter): name for name, parameter in model.named_parameters()}
        expected = {names[id(p)] for g in optimizer.param_groups if g["weight_decay"] == 0 for p in g["params"]}
        with learner_code(f"calling names_without_decay on a {label}"):
            returned = function(model)
        if returned is None:
            raise Wrong(
                "names_without_decay returned None: end the function with `return` and the list of names "
                "(a list, set or tuple of str)."
            )
        if isinstance(returned, str) or not hasattr(returned, "__iter__"):
            raise Wrong(
                f"names_without_decay returned {type(returned).__name__}; return a list of parameter names "
                "(str), such as 'bert.embeddings.LayerNorm.weight'."
            )
        with learner_code(f"iterating over what names_without_decay returned for a {label}"):
            answer = set(returned)
        if not all(isinstance(name, str) for name in answer):
            kinds = sorted({type(name).__name__ for name in answer if not isinstance(name, str)})
            raise Wrong(
                f"names_without_decay returned {', '.join(kinds)} items; return the parameters' names (str) "
                "from model.named_parameters(), not the parameters themselves."
            )
        if answer != expected:
            missing, extra = sorted(expected - answer), sorted(answer - expected)
            raise Wrong(
                f"on a {label} you missed {len(missing)} names (e.g. {missing[:2]}) and added {len(extra)} that "
                f"Trainer does decay (e.g. {extra[:2]}). Trainer skips every bias and every parameter of a "
                "torch.nn.LayerNorm module, whatever the module is called."
            )


def _loss_as_accuracy(prediction: Any) -> dict[str, float]:
    """Not an accuracy: the eval loss, so that the highest 'accuracy' and the lowest loss fall on different steps."""
    import torch

    logits, labels = torch.tensor(prediction.predictions), torch.tensor(prediction.label_ids)
    return {"accuracy": float(torch.nn.functional.cross_entropy(logits, labels))}


def _check_best_model(settings: Any) -> None:
    from safetensors.torch import load_file

    fixed = {"max_steps": 6, "per_device_train_batch_size": 8, "learning_rate": 1e-2}
    trainer = fixtures.trainer(
        settings,
        fixed=fixed,
        eval_dataset=fixtures.random_ids(16, seed=1),
        compute_metrics=_loss_as_accuracy,
    )
    fixtures.train(trainer, "training with your settings")
    evaluations = fixtures.log_entries(trainer, "eval_accuracy")
    steps = [step for step, _ in evaluations]
    if steps[:3] != [2, 4, 6]:
        raise Wrong(f"evaluations ran at updates {steps}, not every 2 updates (2, 4, 6): eval_strategy and eval_steps.")
    kept = sorted(path.name for path in Path(trainer.args.output_dir).glob("checkpoint-*"))
    if len(kept) > 2:
        raise Wrong(f"{len(kept)} checkpoints stayed on disk ({kept}); keep at most 2 with save_total_limit.")
    top = max(evaluations[:3], key=lambda pair: pair[1])[0]
    best = Path(trainer.args.output_dir) / f"checkpoint-{top}" / "model.safetensors"
    if not str(trainer.state.best_model_checkpoint or "").endswith(f"checkpoint-{top}") or not best.exists():
        shown = ", ".join(f"{value:.3f} at {step}" for step, value in evaluations)
        raise Wrong(
            f"the eval accuracies were {shown}, so the best is checkpoint-{top}, but the Trainer "
            f"kept {trainer.state.best_model_checkpoint} as the best (checkpoints on disk: {kept}). Save at every "
            "evaluation, choose the best on metric_for_best_model='accuracy', and higher must be better."
        )
    saved, live = load_file(best), trainer.model.state_dict()
    if not trainer.args.load_best_model_at_end or any(not (live[k] == v).all() for k, v in saved.items() if k in live):
        raise Wrong(f"after training the model is not the one of checkpoint-{top}: set load_best_model_at_end=True.")


q1 = Exercise(
    answer_name="batching_settings",
    checker=_check_batching,
    hint_text="effective batch = per_device_train_batch_size x gradient_accumulation_steps; max_steps counts updates.",
    solution_obj=solutions.batching_settings,
)

q2 = Exercise(
    answer_name="names_without_decay",
    checker=_check_no_decay,
    hint_text=(
        "The Trainer decides by module type as well as by name: every bias, and every parameter of a LayerNorm "
        "module, whatever it is called (GPT-2 calls them ln_1, ln_2, ln_f). Walk the modules, not only the names, and"
        " return the names as strings."
    ),
    solution_obj=solutions.names_without_decay,
)

q3 = Exercise(
    answer_name="best_model_settings",
    checker=_check_best_model,
    hint_text="Save whenever the run evaluates (the same schedule, or only when the metric improves), choose the best "
    "checkpoint by the accuracy, and say that a higher accuracy is better; keep at most two checkpoints.",
    solution_obj=solutions.best_model_settings,
)

bind_exercises(globals())
