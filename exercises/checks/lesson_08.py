"""Exercises of lesson 08 (training step and gradients). Each check builds a real, tiny Trainer, with a learning
rate, a weight decay and decays that no library default has, drawn at check time from the check's own seed."""

from __future__ import annotations

import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.checks.lesson_05 import misspelled_events_note
from exercises.solutions import lesson_08 as solutions
from helpers.gradient_norms import GradientNormRecorder

CHECK_SEED = 808


def _settings(rng: random.Random) -> tuple[float, float]:
    """A learning rate and a weight decay unlike any default (AdamW's 1e-3 and 0.01, the Trainer's 5e-5 and 0)."""
    learning_rate = round(rng.uniform(2.1e-4, 9.3e-4), 7)
    weight_decay = round(rng.uniform(0.021, 0.093), 4)
    return learning_rate, weight_decay


def _check_head_monitor(answer: Any) -> None:
    from transformers import TrainerCallback

    if not (isinstance(answer, type) and issubclass(answer, TrainerCallback)):
        raise Wrong(
            f"MyHeadGradientMonitor must be a class that subclasses transformers.TrainerCallback, got {answer!r}."
        )
    learning_rate, _ = _settings(random.Random(CHECK_SEED))
    for steps, accumulation in ((3, 1), (2, 2)):
        with learner_code("creating MyHeadGradientMonitor()"):
            monitor = answer()
        reference = GradientNormRecorder(group_by=lambda name: "head", keep=lambda name: name.startswith("classifier"))
        settings = dict(
            max_steps=steps,
            gradient_accumulation_steps=accumulation,
            per_device_train_batch_size=8,
            max_grad_norm=0.05,
            learning_rate=learning_rate,
            save_strategy="no",
        )  # clipping changes the norms
        fixtures.train(fixtures.trainer(settings, callbacks=[monitor, reference]), "training with your callback")
        norms = getattr(monitor, "norms", None)
        if not isinstance(norms, list):
            raise Wrong("the callback must keep its norms in a list attribute `self.norms` (set it in __init__).")
        if len(norms) != steps:
            raise Wrong(
                f"{steps} optimizer steps ran (accumulation {accumulation}) but self.norms holds {len(norms)} values: "
                "record once per optimizer step, where the clipped gradients exist (on_pre_optimizer_step)."
            )
        values, expected = [float(value) for value in norms], reference.norms["head"]
        if any(abs(got - want) > 1e-4 * max(want, 1e-8) for got, want in zip(values, expected)):
            raise Wrong(
                f"your norms {[round(v, 5) for v in values]} differ from the classifier's gradient norms after "
                f"clipping {[round(v, 5) for v in expected]}. Use the L2 norm (sqrt of the sum of squares) over "
                "every parameter whose name starts with 'classifier', read at on_pre_optimizer_step."
            )


def _depth(name: str, layers: int) -> int:
    if ".layer." in name:
        return layers - int(name.split(".layer.")[1].split(".")[0])
    return layers + 1 if "embeddings" in name else 0


def _check_layerwise_decay(answer: Any) -> None:
    from transformers import Trainer

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"MyLayerwiseDecayTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    rng = random.Random(CHECK_SEED + 1)
    learning_rate, weight_decay = _settings(rng)
    decays = [round(rng.uniform(0.55, 0.95), 2) for _ in range(2)]  # never the lesson's 0.5 or the text's 0.8
    decays = [decay + 0.01 if decay == 0.8 else decay for decay in decays]
    for layers, decay in zip((2, 3), decays):
        settings = {"learning_rate": learning_rate, "weight_decay": weight_decay, "max_steps": 1, "save_strategy": "no"}
        model = fixtures.tiny_model(layers=layers)
        with learner_code(f"creating MyLayerwiseDecayTrainer(decay={decay}, ...)"):
            trainer = fixtures.trainer(settings, trainer_class=answer, model=model, decay=decay)
        with learner_code("calling your create_optimizer()"):
            optimizer = trainer.create_optimizer()
        if optimizer is None or optimizer is not trainer.optimizer:
            raise Wrong("create_optimizer must set self.optimizer and return it.")
        settings_of: dict[int, tuple[float, float]] = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                if id(param) in settings_of:
                    raise Wrong("a parameter appears in two parameter groups; give each parameter exactly one group.")
                settings_of[id(param)] = (group["lr"], group.get("weight_decay", 0.0))
        decayed = set(trainer.get_decay_parameter_names(model))
        for name, param in model.named_parameters():
            if id(param) not in settings_of:
                raise Wrong(f"{name} is in no parameter group, so it would never be trained. Include every parameter.")
            lr, wd = settings_of[id(param)]
            depth = _depth(name, layers)
            if abs(lr - learning_rate * decay**depth) > 1e-12:
                raise Wrong(
                    f"with {layers} layers, decay={decay} and learning_rate={learning_rate}, {name} has lr "
                    f"{lr:.4e}, expected {learning_rate * decay**depth:.4e} (args.learning_rate * decay ** {depth}; "
                    "depth counts down from the top). Give every parameter group its own lr."
                )
            expected_wd = weight_decay if name in decayed else 0.0
            if abs(wd - expected_wd) > 1e-12:
                raise Wrong(
                    f"with weight_decay={weight_decay}, {name} has weight_decay {wd}, expected {expected_wd}: like "
                    "the Trainer, use args.weight_decay for the names of self.get_decay_parameter_names(model) and "
                    "0.0 for the others (biases and LayerNorm weights), in every parameter group."
                )
        fixtures.train(trainer, "training one step with your optimizer")


q1 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="MyHeadGradientMonitor",
    checker=_check_head_monitor,
    hint_text=(
        "on_pre_optimizer_step comes after the backward pass and before the update, and receives the model: the "
        "gradients are there. Take those of the classification head only and combine them into one norm (the root of "
        "the sum of squares), as a float."
    ),
    solution_obj=solutions.MyHeadGradientMonitor,
)

q2 = Exercise(
    answer_name="MyLayerwiseDecayTrainer",
    checker=_check_layerwise_decay,
    hint_text=(
        "Take decay in __init__ and hand the rest to the Trainer. In create_optimizer, only when there is no "
        "optimizer yet, group the parameters by depth and by whether the Trainer decays them (one of its methods "
        "names those); a group's rate is the base rate times decay to the power of its depth."
    ),
    solution_obj=solutions.MyLayerwiseDecayTrainer,
)

bind_exercises(globals())
