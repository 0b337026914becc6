"""The capstone task (lesson 12): its data, its model and its score, defined once.

Positive reviews are rare: 1 in 10. The task: train the capstone model so that the **minority-class F1** (the F1
of ``positive``) reaches :data:`GOAL_F1` on reviews the learner's code never sees. The notebook, the check
(``helpers.checks.lesson_12``), the reference solution and ``tools/capstone_goal.py`` all read the task here:

* :func:`load_data`: the tokenized training and validation splits a learner works with;
* :func:`model_init`: a fresh capstone model, meant for ``Trainer(model_init=capstone.model_init)``: the Trainer
  seeds (with ``args.seed``) before it calls it, so the new classification head is the same in every run;
* :func:`held_out_f1`: the score, on a third split that no function here hands out (so a model that has learnt
  the validation labels by heart gains nothing); :func:`minority_f1` scores any dataset the same way;
* :func:`seeded_trainer`: how the check and ``tools/capstone_goal.py`` build a learner's Trainer, seeded first;
  :func:`split_of` and :func:`is_fresh`: what the check asks of the reviews a Trainer trains on and of the model it
  starts from.

The task is the same on every machine (its sizes do not follow the profile), so the goal measured over 10 seeds
by ``tools/capstone_goal.py`` holds everywhere; only the device and the precision follow
``helpers.active_profile()``. The starter code is in the notebook (exported to ``helpers.lessons.lesson_12``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

POSITIVE_SHARE = 0.1  # 1 positive review for 9 negative ones, in every split
# Chosen from tools/capstone_goal.py's measurement over 10 seeds (figures and date: lesson 12, section "The reference
# against the starter").
GOAL_F1 = 0.25
SEED = 42  # what the check seeds with before it calls the learner's factory
SPLIT_SEED = 12
# Reviews per split: training and validation from the course's train and validation splits, the held-out reviews
# from its test split (different movies in each).
SIZES = {"train": 640, "validation": 400, "held_out": 500}
LAYERS = 2  # encoder layers of the course model the capstone keeps (frozen)
MAX_LENGTH = 32  # tokens per review
HEAD_INIT_STD = 0.02  # the new head's weights are drawn from N(0, 0.02), its bias starts at 0 (as in BERT)


def imbalanced_sample(split: Any, size: int, positive_share: float = POSITIVE_SHARE, seed: int = SPLIT_SEED) -> Any:
    """A shuffled, seeded sample of ``size`` reviews of which ``round(size * positive_share)`` are positive.

    Raises:
        ValueError: bad sizes, or the split has too few reviews of a class for the sample asked for.
    """
    if not 0 < positive_share < 1 or not isinstance(size, int) or size < 2:
        raise ValueError(f"need 0 < positive_share < 1 and an int size >= 2, got {positive_share!r}, {size!r}.")
    from datasets import concatenate_datasets

    wanted = {1: round(size * positive_share), 0: size - round(size * positive_share)}
    parts = []
    for label, count in wanted.items():
        rows = split.filter(lambda batch, label=label: [value == label for value in batch["label"]], batched=True)
        if len(rows) < count:
            raise ValueError(
                f"the split has {len(rows)} reviews labelled {label}, fewer than the {count} asked for; "
                "ask for a smaller size."
            )
        parts.append(rows.shuffle(seed=seed).select(range(count)))
    return concatenate_datasets(parts).shuffle(seed=seed)


def load_data() -> Any:
    """The capstone's tokenized ``DatasetDict(train, validation)``, both at 1 positive for 9 negatives.

    Training reviews come from the course's train split and validation reviews from its validation split
    (different movies), tokenized by the course tokenizer (at most :data:`MAX_LENGTH` tokens); the class is in
    ``labels``, the column lesson 07's class-weighted Trainer counts. Built once, then handed out as a copy.
    """
    import datasets

    splits = _tokenized_splits()
    return datasets.DatasetDict({name: splits[name] for name in ("train", "validation")})


@functools.cache
def _tokenized_splits() -> dict[str, Any]:
    import datasets

    import helpers

    reviews = helpers.load_reviews()
    raw = datasets.DatasetDict(
        {
            "train": imbalanced_sample(reviews["train"], SIZES["train"]),
            "validation": imbalanced_sample(reviews["validation"], SIZES["validation"]),
            "held_out": imbalanced_sample(reviews["test"], SIZES["held_out"]),
        }
    )
    tokenized = helpers.tokenize_reviews(raw, helpers.models.load_tokenizer(), MAX_LENGTH)
    return dict(tokenized.rename_column("label", "labels"))  # the name lesson 07's class-weighted Trainer counts


class MeanPoolingClassifier(torch.nn.Module):
    """A sequence classifier that reads an encoder the way all-MiniLM-L6-v2 was trained to be read: the mean of
    its token vectors (padding left out), then dropout and a linear head, ``classifier``.

    ``forward`` returns a ``SequenceClassifierOutput`` whose ``loss`` is the mean cross-entropy when ``labels`` are
    given, like a ``...ForSequenceClassification`` model of transformers.
    """

    def __init__(self, encoder: torch.nn.Module, num_labels: int = 2, dropout: float = 0.1) -> None:
        super().__init__()
        self.bert = encoder
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(encoder.config.hidden_size, num_labels)
        torch.nn.init.normal_(self.classifier.weight, std=HEAD_INIT_STD)
        torch.nn.init.zeros_(self.classifier.bias)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
    ) -> Any:
        from transformers.modeling_outputs import SequenceClassifierOutput

        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        tokens = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
        pooled = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
        logits = self.classifier(self.dropout(pooled))
        loss = None if labels is None else torch.nn.functional.cross_entropy(logits.float(), labels)
        return SequenceClassifierOutput(loss=loss, logits=logits)


def model_init() -> MeanPoolingClassifier:
    """A fresh capstone model: the first :data:`LAYERS` encoder layers of the course model, frozen, read by their
    mean token vector, and a new linear head (the only part that trains).

    Pass the function itself, ``model_init=capstone.model_init``: the Trainer seeds before it builds the model.
    """
    import helpers

    encoder = helpers.models.load_model(num_layers=LAYERS).bert
    encoder.pooler = None  # the [CLS] pooler is not used: the mean of the token vectors is
    encoder.requires_grad_(False)
    return MeanPoolingClassifier(encoder)


def split_of(input_ids: list[int]) -> str | None:
    """Which capstone split a tokenized review (padding at its end allowed) comes from: ``"train"``,
    ``"validation"``, ``"held_out"``, or ``None`` for a review of none of them."""
    ids = list(input_ids)
    while ids and ids[-1] == 0:  # the collator pads with 0 ([PAD]) at the end
        ids.pop()
    return _review_splits().get(tuple(ids))


@functools.cache
def _review_splits() -> dict[tuple[int, ...], str]:
    return {tuple(ids): name for name, split in _tokenized_splits().items() for ids in split["input_ids"]}


def is_fresh(model: Any) -> bool:
    """Whether ``model`` starts where :func:`model_init` starts: every weight of the course model it keeps (under
    any prefix) unchanged, and a head not trained yet (bias 0, weights drawn at :data:`HEAD_INIT_STD`)."""
    own = {name: value.detach().cpu() for name, value in model.state_dict().items()}

    def found(suffix: str) -> Any:
        return next((value for name, value in own.items() if name.endswith(suffix)), None)

    bias, weight = found("classifier.bias"), found("classifier.weight")
    if bias is None or weight is None or bias.any() or not 0.5 < float(weight.float().std()) / HEAD_INIT_STD < 1.5:
        return False
    return all(found(name) is not None and torch.equal(found(name), value) for name, value in _pristine().items())


@functools.cache
def _pristine() -> dict[str, torch.Tensor]:
    with torch.random.fork_rng(devices=[]):  # leaves the global random generators as they were
        return {name: value for name, value in model_init().state_dict().items() if not name.startswith("classifier")}


def minority_f1(model: Any, dataset: Any) -> float:
    """The F1 of the positive (minority) class of ``model`` on ``dataset`` (argmax of the logits)."""
    return float(_scores(model, dataset)["f1"])


def held_out_f1(model: Any) -> float:
    """The capstone's score: :func:`minority_f1` on the held-out split, which the learner's code never receives."""
    return float(held_out_scores(model)["f1"])


def held_out_scores(model: Any) -> dict[str, float]:
    """Accuracy, and precision, recall and F1 of class 1, of ``model`` on the held-out split (``f1`` is the score;
    scikit-learn's, as lesson 04's metrics compute them), and ``predicted_positive``: how many of its reviews the
    model calls positive (the split holds ``SIZES['held_out'] // 10`` positive ones)."""
    return _scores(model, _tokenized_splits()["held_out"])


def _scores(model: Any, dataset: Any) -> dict[str, float]:
    import tempfile

    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    import helpers

    profile = helpers.active_profile()
    with tempfile.TemporaryDirectory() as folder:
        args = TrainingArguments(
            output_dir=folder,
            per_device_eval_batch_size=profile.eval_batch_size,
            report_to="none",
            disable_tqdm=True,
            **profile.precision_kwargs(),
        )
        collator = DataCollatorWithPadding(helpers.models.load_tokenizer())
        prediction = Trainer(model=model, args=args, data_collator=collator).predict(dataset)
    return held_out_metrics(prediction.label_ids, prediction.predictions.argmax(-1))


def held_out_metrics(labels: Any, predicted: Any) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of class 1 (scikit-learn, no division warnings), and how many of the
    predictions are positive: what :func:`held_out_scores` reports, from labels and predicted classes."""
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    scores = {
        "accuracy": accuracy_score(labels, predicted),
        "precision": precision_score(labels, predicted, pos_label=1, zero_division=0.0),
        "recall": recall_score(labels, predicted, pos_label=1, zero_division=0.0),
        "f1": f1_score(labels, predicted, pos_label=1, zero_division=0.0),
    }
    return {**{name: float(value) for name, value in scores.items()}, "predicted_positive": int((predicted == 1).sum())}


def seeded_trainer(make_trainer: Callable[[], Any], seed: int = SEED) -> Any:
    """Seed Python, NumPy and torch with ``seed``, then return ``make_trainer()``.

    Seeding first makes the learner's Trainer a function of their code alone, whatever ran before: a model built
    inside ``make_trainer`` gets the same new head in every run, and one built by ``model_init`` is seeded by the
    Trainer with ``args.seed`` anyway.
    """
    import helpers

    helpers.seed_everything(seed)
    return make_trainer()
