"""Exercises of lesson 08 (training step and gradients). Each check builds a real, tiny Trainer.

The tiny Trainer comes from :func:`helpers.checks.lesson_07.tiny_trainer` (a 2-layer, 32-wide BERT on random ids).
"""

from __future__ import annotations

from typing import Any

from helpers.checks.core import Exercise, Wrong
from helpers.checks.lesson_07 import tiny_trainer
from helpers.gradients import GradientNormRecorder
from helpers.solutions import lesson_08 as solutions

CHECK_LR = 1e-3
DECAY = 0.5


def _check_head_monitor(answer: Any) -> None:
    from transformers import TrainerCallback

    if not (isinstance(answer, type) and issubclass(answer, TrainerCallback)):
        raise Wrong(
            f"MyHeadGradientMonitor must be a class that subclasses transformers.TrainerCallback, got {answer!r}."
        )
    monitor = answer()
    reference = GradientNormRecorder(group_by=lambda name: "head", keep=lambda name: name.startswith("classifier"))
    # a small max_grad_norm, so that clipping changes the norms: the check tells before from after
    trainer = tiny_trainer(max_steps=3, max_grad_norm=0.05, callbacks=[monitor, reference])
    trainer.train()
    norms = getattr(monitor, "norms", None)
    if not isinstance(norms, list):
        raise Wrong("the callback must keep its norms in a list attribute `self.norms` (set it in __init__).")
    if len(norms) != 3:
        raise Wrong(
            f"3 optimizer steps ran but self.norms holds {len(norms)} values: record once per optimizer step, "
            "at the event where gradients exist (on_pre_optimizer_step)."
        )
    expected = reference.norms["head"]
    values = [float(value) for value in norms]
    if any(abs(got - want) > 1e-4 * max(want, 1e-8) for got, want in zip(values, expected)):
        raise Wrong(
            f"your norms {[round(v, 5) for v in values]} differ from the classifier's gradient norms after "
            f"clipping {[round(v, 5) for v in expected]}. Use the L2 norm (sqrt of the sum of squares) over "
            "every parameter whose name starts with 'classifier', read at on_pre_optimizer_step."
        )


def _check_layerwise_decay(answer: Any) -> None:
    from transformers import Trainer

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"MyLayerwiseDecayTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    trainer = tiny_trainer(answer, learning_rate=CHECK_LR)
    optimizer = trainer.create_optimizer()
    if optimizer is None or optimizer is not trainer.optimizer:
        raise Wrong("create_optimizer must set self.optimizer and return it.")
    layers = trainer.model.config.num_hidden_layers
    lr_of = {}
    for group in optimizer.param_groups:
        for param in group["params"]:
            if id(param) in lr_of:
                raise Wrong("a parameter appears in two parameter groups; give each parameter exactly one group.")
            lr_of[id(param)] = group["lr"]
    for name, param in trainer.model.named_parameters():
        if ".layer." in name:
            depth = layers - int(name.split(".layer.")[1].split(".")[0])
        else:
            depth = layers + 1 if "embeddings" in name else 0
        expected = CHECK_LR * DECAY**depth
        if id(param) not in lr_of:
            raise Wrong(f"{name} is in no parameter group, so it would never be trained. Include every parameter.")
        if abs(lr_of[id(param)] - expected) > 1e-12:
            raise Wrong(
                f"{name} has lr {lr_of[id(param)]:.3e}, expected {expected:.3e} "
                f"(learning_rate * 0.5 ** {depth}; the layers count down from the top)."
            )


q1 = Exercise(
    name="08.1",
    answer_name="MyHeadGradientMonitor",
    checker=_check_head_monitor,
    hint_text=(
        "Subclass TrainerCallback; in __init__ set self.norms = []; in on_pre_optimizer_step(self, args, state, "
        "control, model=None, **kwargs) take the grads of parameters whose name starts with 'classifier' and "
        "append torch.sqrt(sum(g.pow(2).sum() for g in grads)).item()."
    ),
    solution_obj=solutions.MyHeadGradientMonitor,
    wrong_answers=[solutions.StepEndMonitor, solutions.MeanGradientMonitor, solutions.WholeModelMonitor],
)

q2 = Exercise(
    name="08.2",
    answer_name="MyLayerwiseDecayTrainer",
    checker=_check_layerwise_decay,
    hint_text=(
        "In create_optimizer, when self.optimizer is None: for each named parameter find its depth from the top "
        "(0 for classifier and pooler, L - i for '.layer.i.', L + 1 for embeddings), group the parameters by "
        "depth, and build torch.optim.AdamW([{'params': ..., 'lr': lr * 0.5 ** depth}, ...]). Return it."
    ),
    solution_obj=solutions.MyLayerwiseDecayTrainer,
    wrong_answers=[solutions.UniformLRTrainer, solutions.InvertedDecayTrainer, solutions.ForgetsEmbeddingsTrainer],
)
