"""The capstone task (lesson 12): its data, its model and its score, defined once.

Positive reviews are rare: 1 in 10. The task: train the capstone model so that the **minority-class F1** (the F1
of ``positive``) reaches :data:`GOAL_F1` on reviews the learner's code never sees. The notebook, the check
(``exercises.checks.lesson_12``), the reference solution and ``tools/capstone_goal.py`` all read the task here:

* :func:`load_data`: the tokenized training and validation splits a learner works with;
* :func:`model_init`: a fresh capstone model, meant for ``Trainer(model_init=capstone.model_init)``: the Trainer
  seeds (with ``args.seed``) before it calls it, so the new classification head is the same in every run;
* :func:`held_out_scores`: the score, the mean minority-class F1 over :data:`DRAWS` samples of held-out reviews
  drawn when it scores, from a seed nobody knows before (so no code can rebuild the sample it will be scored on),
  out of the course's test split, which no function here hands out; it scores its own copy of the capstone model
  carrying the weights of the model it is given (:func:`rebuilt`), so no code of the learner's runs while it
  scores and a model that looks labels up gains nothing; :func:`minority_f1` scores any dataset the same way;
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

from helpers.device import SEED as COURSE_SEED

POSITIVE_SHARE = 0.1  # 1 positive review for 9 negative ones, in every split
# Chosen from tools/capstone_goal.py's measurement over 10 seeds (its figures and date are in the teacher's guide).
GOAL_F1 = 0.25
SEED = COURSE_SEED  # what the check seeds with before it calls the learner's factory
SPLIT_SEED = 12
# Reviews per split: training and validation from the course's train and validation splits, each held-out sample
# from its test split (different movies in each), drawn when it scores.
SIZES = {"train": 640, "validation": 400, "held_out": 500}
DRAWS = 100  # held-out samples a score averages: the goal is set on the distribution, not on one sample
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
            "held_out": reviews["test"],  # the pool the held-out samples are drawn from, all of it
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


def _pristine() -> dict[str, torch.Tensor]:
    return {name: value for name, value in _template().state_dict().items() if not name.startswith("classifier")}


def held_out_scores(model: Any, draw: int | None = None) -> dict[str, float]:
    """The capstone's score of ``model``: the F1 of class 1 (scikit-learn's, as helpers.metrics computes it), the
    mean over :data:`DRAWS` samples of ``SIZES['held_out']`` held-out reviews at 1 positive in 10, drawn from the
    course's test split with the seed ``draw`` (by default one drawn now, from the operating system's randomness).

    Scored on :func:`rebuilt` ``(model)``, so nothing of ``model`` but its weights takes part. Returns ``f1``
    (and ``accuracy``, ``precision``, ``recall``: :func:`held_out_metrics`, averaged the same way),
    ``predicted_positive`` (how many reviews of a sample the model calls positive, on average; a sample holds
    ``SIZES['held_out'] // 10`` positive ones) and ``draw``, the seed, to score the same samples again.

    Raises:
        ValueError: ``model`` does not hold the capstone model's weights (see :func:`rebuilt`).
    """
    import random

    import numpy as np

    draw = random.SystemRandom().randrange(2**32) if draw is None else draw
    labels, predicted = _held_out_predictions(rebuilt(model))
    by_class = {label: np.flatnonzero(labels == label) for label in (0, 1)}
    positives = round(SIZES["held_out"] * POSITIVE_SHARE)
    samples = []
    for number in range(DRAWS):
        rng = np.random.default_rng([draw, number])
        rows = np.concatenate(
            [
                rng.choice(by_class[1], positives, replace=False),
                rng.choice(by_class[0], SIZES["held_out"] - positives, replace=False),
            ]
        )
        samples.append(held_out_metrics(labels[rows], predicted[rows]))
    means = {name: float(np.mean([sample[name] for sample in samples])) for name in samples[0]}
    return {**means, "predicted_positive": round(means["predicted_positive"]), "draw": draw}


def rebuilt(model: Any) -> MeanPoolingClassifier:
    """A fresh capstone model (as :func:`model_init` builds it) carrying ``model``'s weights, each found by its name
    under any prefix; evaluation mode, on the CPU.

    Raises:
        ValueError: a weight of the capstone model is missing from ``model`` (or has another shape), or ``model``
            trains weights the capstone model does not have.
    """
    import copy

    own = {name: value.detach().cpu() for name, value in model.state_dict().items()}
    fresh = copy.deepcopy(_template())
    state, used = {}, set()
    for name, value in fresh.state_dict().items():
        found = [key for key in own if key == name or key.endswith(f".{name}")]
        if len(found) != 1 or own[found[0]].shape != value.shape:
            raise ValueError(
                f"the model holds {len(found)} weights named like the capstone model's {name!r} (of shape "
                f"{tuple(value.shape)}): build it with model_init=capstone.model_init and train it as it is."
            )
        state[name] = own[found[0]].to(value.dtype)
        used.add(found[0])
    extra = [name for name, value in model.named_parameters() if value.requires_grad and name not in used]
    if extra:
        raise ValueError(
            f"the model trains weights the capstone model does not have ({extra[:3]}): the score is the capstone "
            "model's, with your weights; train its head (and, if you like, its encoder), not new modules."
        )
    fresh.load_state_dict(state)
    return fresh.eval()


def _held_out_predictions(model: MeanPoolingClassifier) -> tuple[Any, Any]:
    """``(labels, predicted labels)`` on every held-out review. With the encoder :func:`model_init` gives (frozen, as
    the capstone keeps it) only the head differs between models, so it reads the mean token vectors computed once."""
    import numpy as np

    state = model.state_dict()
    if not all(torch.equal(state[name], value) for name, value in _pristine().items()):
        return _predict(model, _tokenized_splits()["held_out"])
    labels, pooled = _held_out_pooled()
    with torch.no_grad():
        logits = model.classifier(pooled)
    return labels, np.asarray(logits.argmax(-1))


@functools.cache
def _held_out_pooled() -> tuple[Any, torch.Tensor]:
    """The labels of the held-out reviews and their mean token vectors through the capstone's frozen encoder."""
    pooled: list[torch.Tensor] = []
    template = _template()
    hook = template.classifier.register_forward_pre_hook(lambda module, args: pooled.append(args[0].detach().cpu()))
    try:
        labels, _ = _predict(template, _tokenized_splits()["held_out"])
    finally:
        hook.remove()
    return labels, torch.cat(pooled).float()


@functools.cache
def _template() -> MeanPoolingClassifier:
    with torch.random.fork_rng(devices=[]):  # leaves the global random generators as they were
        return model_init()


def minority_f1(model: Any, dataset: Any) -> float:
    """The F1 of the positive (minority) class of ``model`` on ``dataset`` (argmax of the logits)."""
    return held_out_metrics(*_predict(model, dataset))["f1"]


def held_out_metrics(labels: Any, predicted: Any) -> dict[str, float]:
    """Accuracy, precision, recall and F1 of class 1 (scikit-learn's, as helpers.metrics computes them, with no
    division warnings), and ``predicted_positive``, how many predictions are positive: one sample's scores."""
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    scores = {
        "accuracy": accuracy_score(labels, predicted),
        "precision": precision_score(labels, predicted, pos_label=1, zero_division=0.0),
        "recall": recall_score(labels, predicted, pos_label=1, zero_division=0.0),
        "f1": f1_score(labels, predicted, pos_label=1, zero_division=0.0),
    }
    return {**{name: float(value) for name, value in scores.items()}, "predicted_positive": int((predicted == 1).sum())}


def _predict(model: Any, dataset: Any) -> tuple[Any, Any]:
    """``(labels, predicted labels)`` of ``model`` on ``dataset``, with the course's collator and profile."""
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
    return prediction.label_ids, prediction.predictions.argmax(-1)


def seeded_trainer(make_trainer: Callable[[], Any], seed: int = SEED) -> Any:
    """Seed Python, NumPy and torch with ``seed``, then return ``make_trainer()``.

    Seeding first makes the learner's Trainer a function of their code alone, whatever ran before: a model built
    inside ``make_trainer`` gets the same new head in every run, and one built by ``model_init`` is seeded by the
    Trainer with ``args.seed`` anyway.
    """
    import helpers

    helpers.seed_everything(seed)
    return make_trainer()
