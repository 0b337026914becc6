"""Lesson 08's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import math
import re

import torch
from exercise_cases import answer_tests
from transformers import Trainer, TrainerCallback


class MonitorVectorNorm(TrainerCallback):
    def __init__(self):
        self.norms = []

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        grads = [p.grad.flatten() for n, p in kwargs["model"].named_parameters() if n.startswith("classifier")]
        self.norms.append(float(torch.linalg.vector_norm(torch.cat(grads))))


class MonitorAfterOptimizer(TrainerCallback):
    def __init__(self):
        self.norms = []

    def on_optimizer_step(self, args, state, control, model=None, **kwargs):
        head = [p.grad for n, p in model.named_parameters() if n.startswith("classifier.")]
        self.norms.append(math.sqrt(sum(float((g**2).sum()) for g in head)))


class MonitorWeightOnly(MonitorVectorNorm):
    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        self.norms.append(float(model.classifier.weight.grad.norm()))


class MonitorStepEnd(MonitorVectorNorm):
    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        pass

    def on_step_end(self, args, state, control, model=None, **kwargs):
        grads = [p.grad for n, p in model.named_parameters() if n.startswith("classifier") and p.grad is not None]
        if grads:
            self.norms.append(float(torch.stack([g.norm() for g in grads]).norm()))


class DecayRegex(Trainer):
    def __init__(self, decay=0.5, **kwargs):
        self.decay = decay
        super().__init__(**kwargs)

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            layers, decayed = self.model.config.num_hidden_layers, set(self.get_decay_parameter_names(self.model))
            groups = []
            for name, param in self.model.named_parameters():
                match = re.search(r"\.layer\.(\d+)\.", name)
                depth = layers - int(match.group(1)) if match else (layers + 1 if "embeddings" in name else 0)
                groups.append(
                    {
                        "params": [param],
                        "lr": self.args.learning_rate * self.decay**depth,
                        "weight_decay": self.args.weight_decay * (name in decayed),
                    }
                )
            self.optimizer = torch.optim.AdamW(groups)
        return self.optimizer


class DecayOptimizerClsAndKwargs(DecayRegex):
    def create_optimizer(self, model=None):
        if self.optimizer is None:
            super().create_optimizer(model)
            self.optimizer = torch.optim.SGD(self.optimizer.param_groups, lr=self.args.learning_rate)
        return self.optimizer


class DecayEverywhere(DecayRegex):
    def create_optimizer(self, model=None):
        if self.optimizer is None:
            super().create_optimizer(model)
            for group in self.optimizer.param_groups:
                group["weight_decay"] = self.args.weight_decay
        return self.optimizer


class DecayDefaultWeightDecay(DecayRegex):
    """Leaves weight_decay out of the decayed groups, so AdamW's default 0.01 applies: the old check used 0.01."""

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            super().create_optimizer(model)
            for group in self.optimizer.param_groups:
                if group["weight_decay"]:
                    group["weight_decay"] = 0.01  # what torch.optim.AdamW gives a group without its own value
        return self.optimizer


class DecayHeadWithoutLr(Trainer):
    """Gives the head's group no lr, so AdamW's default 1e-3 applies: the old check's learning rate was 1e-3."""

    def __init__(self, decay=0.5, **kwargs):
        self.decay = decay
        super().__init__(**kwargs)

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            layers, decayed = self.model.config.num_hidden_layers, set(self.get_decay_parameter_names(self.model))
            groups = []
            for name, param in self.model.named_parameters():
                match = re.search(r"\.layer\.(\d+)\.", name)
                depth = layers - int(match.group(1)) if match else (layers + 1 if "embeddings" in name else 0)
                group = {"params": [param], "weight_decay": self.args.weight_decay * (name in decayed)}
                if depth:  # the head keeps the optimizer's default lr
                    group["lr"] = self.args.learning_rate * self.decay**depth
                groups.append(group)
            self.optimizer = torch.optim.AdamW(groups)
        return self.optimizer


class DecayFixedHalf(DecayRegex):
    def __init__(self, decay=0.5, **kwargs):
        super().__init__(decay=0.5, **kwargs)


# Realistic mistakes derived from the reference solution by one change.


class MeanGradientMonitor(MonitorVectorNorm):
    """The seeds' statistic, the mean, instead of the norm."""

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        grads = [p.grad for name, p in model.named_parameters() if name.startswith("classifier")]
        self.norms.append(torch.cat([g.flatten() for g in grads]).mean().item())


class LessonDecayTrainer(Trainer):
    """Lesson 08's LayerwiseDecayTrainer pasted: a fixed decay of 0.5, weight decay on every parameter."""

    decay = 0.5

    def __init__(self, *args, decay=None, **kwargs):
        super().__init__(*args, **kwargs)

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            layers = self.model.config.num_hidden_layers
            groups = {}
            for name, param in self.model.named_parameters():
                depth = layers - int(name.split(".layer.")[1].split(".")[0]) if ".layer." in name else 0
                groups.setdefault(layers + 1 if "embeddings" in name else depth, []).append(param)
            self.optimizer = torch.optim.AdamW(
                [{"params": p, "lr": self.args.learning_rate * self.decay**d} for d, p in groups.items()],
                weight_decay=self.args.weight_decay,
            )
        return self.optimizer


class InvertedDecayTrainer(DecayRegex):
    """Decays from the bottom up: the embeddings get the largest learning rate."""

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            decayed = set(self.get_decay_parameter_names(self.model))
            groups = {}
            for name, param in self.model.named_parameters():
                depth = (
                    int(name.split(".layer.")[1].split(".")[0]) + 1
                    if ".layer." in name
                    else (0 if "embeddings" in name else self.model.config.num_hidden_layers + 1)
                )
                groups.setdefault((depth, name in decayed), []).append(param)
            self.optimizer = torch.optim.AdamW(
                [
                    {"params": p, "lr": self.args.learning_rate * self.decay**d, "weight_decay": 0.01 if w else 0.0}
                    for (d, w), p in groups.items()
                ]
            )
        return self.optimizer


class ForgetsEmbeddingsTrainer(DecayRegex):
    """Leaves the embeddings out of the optimizer, so they never train."""

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            self.model.bert.embeddings.requires_grad_(False)
            self.optimizer = super().create_optimizer(model)
            self.optimizer.param_groups = [
                g for g in self.optimizer.param_groups if all(p.requires_grad for p in g["params"])
            ]
        return self.optimizer


CORRECT = {
    "q1": [MonitorVectorNorm, MonitorAfterOptimizer],
    "q2": [DecayRegex, DecayOptimizerClsAndKwargs],
}

MISTAKES = {
    "q1": [
        (MonitorWeightOnly, "every parameter whose name starts with 'classifier'"),
        (MonitorStepEnd, "on_pre_optimizer_step"),
        (MeanGradientMonitor, "Use the L2 norm"),
    ],
    "q2": [
        (DecayEverywhere, "get_decay_parameter_names"),
        (DecayFixedHalf, "decay ** "),
        (DecayDefaultWeightDecay, "in every parameter group"),
        (DecayHeadWithoutLr, "its own lr"),
        (LessonDecayTrainer, "depth counts down from the top"),
        (InvertedDecayTrainer, "depth counts down from the top"),
        (ForgetsEmbeddingsTrainer, "is in no parameter group"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
