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
    def create_optimizer(self, model=None):
        if self.optimizer is None:
            layers = self.model.config.num_hidden_layers
            groups = {}
            for name, param in self.model.named_parameters():
                if ".layer." in name:
                    depth = layers - int(name.split(".layer.")[1].split(".")[0])
                else:
                    depth = layers + 1 if "embeddings" in name else 0
                groups.setdefault(depth, []).append(param)
            self.optimizer = torch.optim.AdamW(
                [{"params": params, "lr": self.args.learning_rate * 0.5**depth} for depth, params in groups.items()]
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


class UniformLRTrainer(Trainer):
    """The default optimizer: one learning rate for all."""


class InvertedDecayTrainer(MyLayerwiseDecayTrainer):
    """Decays from the bottom up: the embeddings get the largest learning rate."""

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            groups = {}
            for name, param in self.model.named_parameters():
                depth = (
                    int(name.split(".layer.")[1].split(".")[0]) + 1
                    if ".layer." in name
                    else (0 if "embeddings" in name else self.model.config.num_hidden_layers + 1)
                )
                groups.setdefault(depth, []).append(param)
            self.optimizer = torch.optim.AdamW(
                [{"params": params, "lr": self.args.learning_rate * 0.5**depth} for depth, params in groups.items()]
            )
        return self.optimizer


class ForgetsEmbeddingsTrainer(MyLayerwiseDecayTrainer):
    """Leaves the embeddings out of the optimizer, so they never train."""

    def create_optimizer(self, model=None):
        if self.optimizer is None:
            layers = self.model.config.num_hidden_layers
            groups = {}
            for name, param in self.model.named_parameters():
                if "embeddings" in name:
                    continue
                depth = layers - int(name.split(".layer.")[1].split(".")[0]) if ".layer." in name else 0
                groups.setdefault(depth, []).append(param)
            self.optimizer = torch.optim.AdamW(
                [{"params": params, "lr": self.args.learning_rate * 0.5**depth} for depth, params in groups.items()]
            )
        return self.optimizer
