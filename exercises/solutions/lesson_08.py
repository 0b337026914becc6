"""Reference solutions for lesson 08's exercises."""

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
