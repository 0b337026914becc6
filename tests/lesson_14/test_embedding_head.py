"""helpers.embedding_head: the frozen-embedding classifier lesson 14's search will train."""

from __future__ import annotations

import pytest
import torch

from helpers.embedding_head import MeanEmbeddingClassifier


def _model(seed: int = 0) -> MeanEmbeddingClassifier:
    torch.manual_seed(seed)
    return MeanEmbeddingClassifier(torch.randn(50, 8), num_labels=2)


def test_padding_does_not_change_the_logits():
    model = _model()
    ids = torch.tensor([[3, 7, 9]])
    padded = torch.tensor([[3, 7, 9, 0, 0]])
    plain = model(ids, torch.ones_like(ids)).logits
    with_pad = model(padded, torch.tensor([[1, 1, 1, 0, 0]])).logits
    torch.testing.assert_close(plain, with_pad)


def test_only_the_head_trains_and_the_loss_is_cross_entropy():
    model = _model(1)
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert trainable == {"head.weight", "head.bias"}
    ids = torch.tensor([[1, 2, 3], [4, 5, 0]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    labels = torch.tensor([0, 1])
    out = model(ids, mask, labels)
    torch.testing.assert_close(out.loss, torch.nn.functional.cross_entropy(out.logits, labels))
    before = model.embeddings.weight.clone()
    out.loss.backward()
    torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1.0).step()
    assert torch.equal(model.embeddings.weight, before)
    assert model.head.weight.grad is not None and model.head.weight.grad.abs().sum() > 0


def test_bad_input_says_what_to_pass():
    with pytest.raises(ValueError, match="2-D tensor"):
        MeanEmbeddingClassifier(torch.randn(5))
    with pytest.raises(ValueError, match="num_labels"):
        MeanEmbeddingClassifier(torch.randn(5, 4), num_labels=1)
