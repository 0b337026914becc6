"""Ready-made features for lessons that train a small head instead of the encoder.

Lesson 07 trains a linear head on frozen sentence embeddings of the full MiniLM, so that a loss can be trained to
convergence on two CPU cores. :func:`one_in_ten` draws its imbalanced reviews, :func:`embedded_reviews` turns
reviews into ``Dataset(features, labels)``: the mean of the encoder's last hidden states over the real tokens.
"""

from __future__ import annotations

from typing import Any


def one_in_ten(split: Any, positives: int, seed: int = 0) -> Any:
    """``positives`` positive reviews of ``split`` and 9 times as many negative ones, shuffled with ``seed``.

    Raises:
        ValueError: ``positives`` is not a positive int, or ``split`` holds too few reviews of a class.
    """
    if not isinstance(positives, int) or positives < 1:
        raise ValueError(f"positives must be a positive int, got {positives!r}.")
    from datasets import concatenate_datasets

    shuffled = split.shuffle(seed=seed)
    negative = shuffled.filter(lambda row: row["label"] == 0)
    positive = shuffled.filter(lambda row: row["label"] == 1)
    if len(positive) < positives or len(negative) < 9 * positives:
        raise ValueError(
            f"the split has {len(positive)} positive and {len(negative)} negative reviews, too few for "
            f"{positives} positive and {9 * positives} negative ones; ask for fewer positives."
        )
    rows = [negative.select(range(9 * positives)), positive.select(range(positives))]
    return concatenate_datasets(rows).shuffle(seed=seed)


def embedded_reviews(rows: Any, encoder: Any, tokenizer: Any, max_length: int, batch_size: int = 64) -> Any:
    """``Dataset(features, labels)``: each review's mean-pooled last hidden state (``encoder`` is a BERT-like
    model in eval mode, e.g. ``load_model().bert``), computed in batches of reviews of similar length.

    Raises:
        ValueError: ``rows`` lacks a ``text`` or a ``label`` column.
    """
    missing = {"text", "label"} - set(rows.column_names)
    if missing:
        raise ValueError(f"embedded_reviews needs the columns text and label; {sorted(missing)} missing.")
    import torch
    from datasets import Dataset

    texts = rows["text"]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths: little padding
    features = torch.empty(len(texts), encoder.config.hidden_size)
    device = next(encoder.parameters()).device
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            some = order[start : start + batch_size]
            batch = tokenizer(
                [texts[i] for i in some], truncation=True, max_length=max_length, padding=True, return_tensors="pt"
            ).to(device)
            hidden = encoder(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            features[some] = ((hidden * mask).sum(1) / mask.sum(1)).float().cpu()
    return Dataset.from_dict({"features": features.tolist(), "labels": rows["label"]})


def imbalanced_review_features(positives: int = 64, max_length: int = 64, device: str | None = None) -> tuple[Any, Any]:
    """Lesson 07's data loader: ``(train, validation)``, each a ``Dataset(features, labels)`` of 1 : 9 imbalanced
    Rotten Tomatoes reviews (:func:`one_in_ten`: ``positives`` positive training reviews, half as many for
    validation), embedded by the full offline MiniLM (:func:`embedded_reviews`, reviews cut at ``max_length``
    tokens) on ``device`` (the GPU when there is one).

    A learner's own project loads its data instead (``load_dataset(...)``) and tokenizes it for its model.
    """
    import torch

    from helpers.data import load_reviews
    from helpers.models import load_model, load_tokenizer

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer, reviews = load_tokenizer(), load_reviews()
    encoder = load_model(num_layers=6).bert.eval().to(device)
    train, validation = (
        embedded_reviews(one_in_ten(reviews[split], count), encoder, tokenizer, max_length)
        for split, count in (("train", positives), ("validation", positives // 2))
    )
    return train, validation
