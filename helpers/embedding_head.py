"""A linear classifier on frozen, mean-pooled token embeddings: a model whose hyperparameters matter on a CPU.

Lesson 14's search needs trials that differ by more than the noise of one setting over seeds, and each trial
must take well under a second on a 2-core CPU. A transformer trained for a few steps learns nothing there (its
evaluation loss stays at ln 2 whatever the learning rate); this model does: it averages the course model's
(all-MiniLM-L6-v2) word embeddings over the real tokens of a review, keeps them frozen, and trains one linear
layer on the average. Measured on the `cpu` profile (512 training reviews, 256 validation, batch 16, 4 epochs,
seeds 1 to 3): learning rate 1e-4 gives evaluation loss 0.690 to 0.691 (accuracy 0.559, the majority class),
5e-2 gives 0.605 to 0.607 (accuracy 0.70 to 0.71); a trial takes about 0.3 s.

* :class:`MeanEmbeddingClassifier`: the model, from any embedding matrix (tests use a random one).
* :func:`course_embedding_classifier`: the model on the course MiniLM's embeddings, a fresh head each call
  (a ``model_init`` for ``Trainer``).
"""

from __future__ import annotations

from typing import Any

import torch


class MeanEmbeddingClassifier(torch.nn.Module):
    """Frozen token embeddings, averaged over the attention mask, then a trainable linear head.

    Args:
        embeddings: the token embedding matrix, shape ``(vocabulary, width)``; copied and frozen.
        num_labels: classes of the linear head.
    """

    def __init__(self, embeddings: torch.Tensor, num_labels: int = 2) -> None:
        super().__init__()
        if not isinstance(embeddings, torch.Tensor) or embeddings.dim() != 2:
            raise ValueError(
                "embeddings must be a 2-D tensor (vocabulary x width), such as "
                "model.get_input_embeddings().weight; got "
                f"{type(embeddings).__name__} with shape {tuple(getattr(embeddings, 'shape', ()))}."
            )
        if not isinstance(num_labels, int) or num_labels < 2:
            raise ValueError(f"num_labels must be an int of at least 2, got {num_labels!r}.")
        weight = embeddings.detach().clone().float()
        self.embeddings = torch.nn.Embedding.from_pretrained(weight, freeze=True)
        self.head = torch.nn.Linear(weight.shape[1], num_labels)
        self.num_labels = num_labels

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        **unused: Any,
    ) -> Any:
        """Logits from the masked mean of the embeddings; the cross-entropy loss when labels are given."""
        from transformers.modeling_outputs import SequenceClassifierOutput

        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        mask = attention_mask.unsqueeze(-1).to(self.head.weight.dtype)
        pooled = (self.embeddings(input_ids) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        logits = self.head(pooled)
        loss = None if labels is None else torch.nn.functional.cross_entropy(logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits)


_COURSE_EMBEDDINGS: dict[str, torch.Tensor] = {}


def course_embedding_classifier(num_labels: int = 2) -> MeanEmbeddingClassifier:
    """A fresh :class:`MeanEmbeddingClassifier` on the course model's word embeddings (read once, offline)."""
    if "local" not in _COURSE_EMBEDDINGS:
        from helpers.models import load_model

        model = load_model(num_layers=1)
        _COURSE_EMBEDDINGS["local"] = model.get_input_embeddings().weight.detach().clone()
    return MeanEmbeddingClassifier(_COURSE_EMBEDDINGS["local"], num_labels)
