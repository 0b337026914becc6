"""A two-input classifier and its data, small enough that a test trains a real Trainer in well under a second.

Shared by the tests of callbacks and control flags (lessons 05 and 06): ``TinyModel`` takes ``x`` and optional
``labels`` and returns a dict with ``logits`` (and ``loss``), as a Hugging Face model does.
"""

from __future__ import annotations

import torch
from torch import nn


class TinyModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        logits = self.linear(x)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits, labels)
        return out


def toy_dataset(count: int = 8) -> list[dict[str, torch.Tensor]]:
    """``count`` rows of 4 seeded features, labels alternating 0 and 1."""
    generator = torch.Generator().manual_seed(0)
    return [{"x": torch.randn(4, generator=generator), "labels": torch.tensor(index % 2)} for index in range(count)]
