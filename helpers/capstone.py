"""The capstone task (lesson 12): its data, its model and its score, defined once.

Positive reviews are rare (1 in 10). The task: fine-tune the course model so that the **minority-class F1** (the
F1 of ``positive``) on the capstone's validation split reaches :data:`GOAL_F1`. The notebook, the check
(``helpers.checks.lesson_12``), the reference solution and ``tools/capstone_goal.py`` all read the task from here:

* :func:`load_data`: the tokenized 1 : 9 splits;
* :func:`model_init`: a fresh capstone model, meant for ``Trainer(model_init=capstone.model_init)``: the
  Trainer seeds (with ``args.seed``) before it calls it, so the new classification head is the same in every run;
* :func:`make_starter_trainer`: the starter code the project begins from;
* :func:`minority_f1`: the score, and :func:`seeded_trainer`: how the check and ``tools/capstone_goal.py`` build a
  learner's Trainer, from a seeded start.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

POSITIVE_SHARE = 0.1  # 1 positive review for 9 negative ones, in training and validation alike
# Chosen from tools/capstone_goal.py's measurement over 10 seeds (figures and date: docs/workshop.md, "The capstone").
GOAL_F1 = 0.3
SEED = 42  # what score() seeds with before it calls the learner's factory
SPLIT_SEED = 12
# (train, validation) reviews per profile: on a CPU small enough that the whole project trains in under 30 s.
SIZES = {"cpu": (640, 400), "mps": (2000, 600), "cuda": (4000, 1000)}
EPOCHS = 3  # for the starter and the reference alike
CPU_MAX_LENGTH = 32  # tokens; on a CPU the capstone cuts the longest reviews to save time


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


def load_data(profile: Any = None) -> Any:
    """The capstone's tokenized ``DatasetDict(train, validation)``, both at 1 positive for 9 negatives.

    Training reviews come from the course's train split and validation reviews from its validation split
    (different movies), tokenized by the course tokenizer; the class is in ``labels``, the column lesson 07's
    class-weighted Trainer counts. Sizes follow the profile (:data:`SIZES`); on the cpu profile reviews are cut
    at :data:`CPU_MAX_LENGTH` tokens. Built once per profile, then handed out as a copy.
    """
    import datasets

    import helpers

    profile = profile or helpers.active_profile()
    return datasets.DatasetDict(_tokenized_splits(profile))


@functools.cache
def _tokenized_splits(profile: Any) -> Any:
    import datasets

    import helpers

    train_size, validation_size = SIZES[profile.name]
    reviews = helpers.load_reviews()
    raw = datasets.DatasetDict(
        {
            "train": imbalanced_sample(reviews["train"], train_size),
            "validation": imbalanced_sample(reviews["validation"], validation_size),
        }
    )
    max_length = min(profile.max_length, CPU_MAX_LENGTH) if profile.name == "cpu" else profile.max_length
    tokenized = helpers.tokenize_reviews(raw, helpers.models.load_tokenizer(), max_length)
    return tokenized.rename_column("label", "labels")  # the name lesson 07's class-weighted Trainer counts


def model_init() -> Any:
    """A fresh capstone model: the course model with a new classification head.

    On the cpu profile only the top encoder layer, the pooler and the head train (the rest is frozen), so a run
    fits the CPU budget; elsewhere everything trains. Pass the function itself, ``model_init=model_init``, and
    the Trainer seeds before it builds the model.
    """
    import helpers

    profile = helpers.active_profile()
    model = helpers.models.load_model(num_layers=profile.num_layers)
    if profile.name == "cpu":
        top = f"encoder.layer.{model.config.num_hidden_layers - 1}."
        for name, parameter in model.named_parameters():
            parameter.requires_grad = name.startswith("classifier") or ".pooler." in name or top in name
    return model


def minority_f1(model: Any, dataset: Any) -> float:
    """The F1 of the positive (minority) class of ``model`` on ``dataset``, by the course metrics (argmax)."""
    import tempfile

    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    import helpers
    from helpers.metrics import make_compute_metrics

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
    return float(make_compute_metrics()(prediction)["f1"])


def seeded_trainer(make_trainer: Callable[[], Any], seed: int = SEED) -> Any:
    """Seed Python, NumPy and torch with ``seed``, then return ``make_trainer()``.

    Seeding first makes the learner's Trainer a function of their code alone, whatever ran before: a model built
    inside ``make_trainer`` gets the same new head in every run, and one built by ``model_init`` is seeded by the
    Trainer with ``args.seed`` anyway.
    """
    import helpers

    helpers.seed_everything(seed)
    return make_trainer()


def make_starter_trainer() -> Any:
    """The project's starter code, as handed out: it runs, but its plain loss lets the rare class be ignored, and
    the model it keeps is the last one. Returns the Trainer before training."""
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    import helpers
    from helpers.metrics import make_compute_metrics

    profile = helpers.active_profile()
    data = load_data()
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("12_starter")),
        seed=42,
        report_to="none",
        num_train_epochs=EPOCHS,
        learning_rate=1e-3,
        per_device_train_batch_size=profile.batch_size,
        per_device_eval_batch_size=profile.eval_batch_size,
        eval_strategy="epoch",
        save_strategy="no",
        logging_steps=10,
        **profile.precision_kwargs(),
    )
    return Trainer(
        model_init=model_init,  # the Trainer seeds with args.seed, then builds the model: the same head every run
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(helpers.models.load_tokenizer()),
        compute_metrics=make_compute_metrics(),
    )
