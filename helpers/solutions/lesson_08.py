"""Reference solutions (and realistic wrong answers) for lesson 08's exercises."""

from __future__ import annotations

import torch
from transformers import Trainer, TrainerCallback


class MyHeadGradientMonitor(TrainerCallback):
    def __init__(self):
        self.norms = []

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        grads = [p.grad for name, p in model.named_parameters() if name.startswith("classifier") and p.grad is not None]
        self.norms.append(torch.sqrt(sum(g.float().pow(2).sum() for g in grads)).item())


class MyLayerwiseDecayTrainer(Trainer):
    def __init__(self, *args, decay, **kwargs):
        super().__init__(*args, **kwargs)
        self.decay = decay

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            layers = self.model.config.num_hidden_layers
            decayed = set(self.get_decay_parameter_names(self.model))
            groups = {}
            for name, param in self.model.named_parameters():
                if ".layer." in name:
                    depth = layers - int(name.split(".layer.")[1].split(".")[0])
                else:
                    depth = layers + 1 if "embeddings" in name else 0
                groups.setdefault((depth, name in decayed), []).append(param)
            self.optimizer = torch.optim.AdamW(
                [
                    {
                        "params": params,
                        "lr": self.args.learning_rate * self.decay**depth,
                        "weight_decay": self.args.weight_decay if decays else 0.0,
                    }
                    for (depth, decays), params in groups.items()
                ]
            )
        return self.optimizer


# ---- realistic wrong answers (the tests prove each is caught) ----


class StepEndMonitor(MyHeadGradientMonitor):
    """Reads at on_step_end, where the gradients are already None."""

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        pass

    def on_step_end(self, args, state, control, model=None, **kwargs):
        grads = [p.grad for name, p in model.named_parameters() if name.startswith("classifier") and p.grad is not None]
        if grads:
            self.norms.append(torch.sqrt(sum(g.pow(2).sum() for g in grads)).item())


class MeanGradientMonitor(MyHeadGradientMonitor):
    """The seeds' statistic, the mean, instead of the norm."""

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        grads = [p.grad for name, p in model.named_parameters() if name.startswith("classifier")]
        self.norms.append(torch.cat([g.flatten() for g in grads]).mean().item())


class WholeModelMonitor(MyHeadGradientMonitor):
    """The norm of every gradient, not only the head's."""

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        self.norms.append(torch.sqrt(sum(g.pow(2).sum() for g in grads)).item())


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


class InvertedDecayTrainer(MyLayerwiseDecayTrainer):
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


class ForgetsEmbeddingsTrainer(MyLayerwiseDecayTrainer):
    """Leaves the embeddings out of the optimizer, so they never train."""

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            self.model.bert.embeddings.requires_grad_(False)
            self.optimizer = super().create_optimizer(model)
            self.optimizer.param_groups = [
                g for g in self.optimizer.param_groups if all(p.requires_grad for p in g["params"])
            ]
        return self.optimizer
