"""tools.caches.user_cache: where the maintenance tools keep their downloads, outside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.caches import user_cache


def test_the_variable_chooses_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COURSE_SOME_CACHE", str(tmp_path))
    assert user_cache("some", "COURSE_SOME_CACHE") == tmp_path


@pytest.mark.parametrize("value", [None, ""])
def test_unset_or_empty_means_the_home_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if value is None:
        monkeypatch.delenv("COURSE_SOME_CACHE", raising=False)
    else:
        monkeypatch.setenv("COURSE_SOME_CACHE", value)
    assert user_cache("some", "COURSE_SOME_CACHE") == tmp_path / ".cache" / "course-some"
