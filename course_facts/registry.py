"""The lesson registry: ``lessons.toml`` at the repository root, the one list of lessons.

Every page and tool reads the lessons from here (the README syllabus, the notebooks' titles, link lines and
"What you will learn" cells, the book's table of contents, the workshop agendas, the cheat sheet's pitfalls,
the participant copies, the tests), so adding a lesson means one ``[[lesson]]`` table plus its notebook.
``make execute`` writes the measured run times back with :func:`record_time`; nothing else writes the file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "lessons.toml"
_FILE_RE = re.compile(r"^(\d\d)_[a-z0-9_]+\.ipynb$")
_TIME_KINDS = ("cpu", "cpu_loaded", "gpu")


class RegistryError(ValueError):
    """``lessons.toml`` is missing a field, repeats a lesson, or names a file the wrong way."""


@dataclass(frozen=True)
class Pitfall:
    """Something learners trip over, and the section of the lesson that reproduces it and shows the fix."""

    text: str
    section: str


@dataclass(frozen=True)
class Lesson:
    """One row of the registry. See the comments at the top of ``lessons.toml`` for each field."""

    number: str
    file: str
    title: str
    summary: str
    goals: tuple[str, ...]
    explain_minutes: int
    exercise_minutes: int
    half_day: bool = False
    follow_up: bool = False
    colab_smoke: bool = False
    times: dict[str, float | str] = field(default_factory=dict)
    pitfalls: tuple[Pitfall, ...] = ()

    @property
    def label(self) -> str:
        """``NN · Title``, as the notebook's first line and the link lines write it."""
        return f"{self.number} · {self.title}"

    @property
    def stem(self) -> str:
        """The file name without ``.ipynb``."""
        return self.file.removesuffix(".ipynb")

    @property
    def path(self) -> Path:
        """The notebook under ``notebooks/``."""
        return ROOT / "notebooks" / self.file

    def seconds(self, kind: str = "cpu") -> float | None:
        """The measured run time (``cpu``, ``cpu_loaded`` or ``gpu``), or ``None`` when not measured."""
        value = self.times.get(f"{kind}_s")
        return float(value) if value is not None else None

    def machine(self, kind: str = "cpu") -> str | None:
        """Where that run time was measured."""
        value = self.times.get(f"{kind}_machine")
        return str(value) if value is not None else None


_REQUIRED = ("number", "file", "title", "summary", "goals", "explain_minutes", "exercise_minutes")


def _lesson(row: dict, index: int) -> Lesson:
    missing = [key for key in _REQUIRED if key not in row]
    if missing:
        raise RegistryError(f"lessons.toml, lesson {index + 1}: missing {', '.join(missing)}.")
    number, file = str(row["number"]), str(row["file"])
    match = _FILE_RE.match(file)
    if not match or match.group(1) != number:
        raise RegistryError(
            f"lessons.toml: lesson {number!r} has file {file!r}; a lesson file is NN_topic.ipynb (lower case, "
            "digits and underscores) and starts with its own number."
        )
    times = {
        key: row[key] for kind in _TIME_KINDS for key in (f"{kind}_s", f"{kind}_machine") if row.get(key) is not None
    }
    pitfalls = tuple(Pitfall(str(item["text"]), str(item["section"])) for item in row.get("pitfall", []))
    return Lesson(
        number=number,
        file=file,
        title=str(row["title"]),
        summary=str(row["summary"]),
        goals=tuple(str(goal) for goal in row["goals"]),
        explain_minutes=int(row["explain_minutes"]),
        exercise_minutes=int(row["exercise_minutes"]),
        half_day=bool(row.get("half_day", False)),
        follow_up=bool(row.get("follow_up", False)),
        colab_smoke=bool(row.get("colab_smoke", False)),
        times=times,
        pitfalls=pitfalls,
    )


def lessons(path: Path = REGISTRY) -> list[Lesson]:
    """Every lesson, in syllabus order (by number).

    Raises:
        RegistryError: the file is missing or malformed, or two lessons share a number or a file.
    """
    if not path.is_file():
        raise RegistryError(f"{path} does not exist; it lists the lessons (see docs/authoring.md).")
    with open(path, "rb") as handle:
        rows = tomllib.load(handle).get("lesson", [])
    found = [_lesson(row, index) for index, row in enumerate(rows)]
    for attribute in ("number", "file"):
        values = [getattr(lesson, attribute) for lesson in found]
        repeated = sorted({value for value in values if values.count(value) > 1})
        if repeated:
            raise RegistryError(f"lessons.toml: more than one lesson has {attribute} {', '.join(repeated)}.")
    return sorted(found, key=lambda lesson: lesson.number)


def lesson(key: str, path: Path = REGISTRY) -> Lesson:
    """One lesson by its number (``"05"``) or its file name (``"05_callback_events.ipynb"``).

    Raises:
        RegistryError: no lesson has that number or file.
    """
    for candidate in lessons(path):
        if key in (candidate.number, candidate.file, candidate.stem):
            return candidate
    raise RegistryError(f"no lesson {key!r} in lessons.toml; numbers are two digits such as '05'.")


def neighbours(key: str, path: Path = REGISTRY) -> tuple[Lesson | None, Lesson | None]:
    """The lessons before and after ``key`` in the syllabus (``None`` at either end)."""
    ordered = lessons(path)
    index = [item.number for item in ordered].index(lesson(key, path).number)
    return (ordered[index - 1] if index else None, ordered[index + 1] if index + 1 < len(ordered) else None)


def record_time(file: str, kind: str, seconds: float, machine: str, path: Path = REGISTRY) -> None:
    """Write a measured run time into the lesson's table of ``lessons.toml`` (``make execute`` calls it).

    The rest of the file, comments included, is left exactly as it is: only the ``<kind>_s`` and
    ``<kind>_machine`` lines of that lesson change (when missing, they are added after the lesson's other fields,
    before its pitfalls).

    Raises:
        RegistryError: unknown kind or lesson.
    """
    if kind not in _TIME_KINDS:
        raise RegistryError(f"kind must be one of {_TIME_KINDS}, got {kind!r}.")
    text = path.read_text(encoding="utf-8")
    blocks = re.split(r"(?m)^(?=\[\[lesson\]\]\s*$)", text)
    found = [i for i, block in enumerate(blocks) if re.search(rf'(?m)^file = "{re.escape(file)}"\s*$', block)]
    if not found:
        raise RegistryError(f"no lesson with file {file!r} in {path.name}.")
    index = found[0]
    head, separator, tail = blocks[index].partition("\n[[lesson.pitfall]]")
    for key, value in ((f"{kind}_s", f"{round(seconds, 1)}"), (f"{kind}_machine", f'"{machine}"')):
        line = f"{key} = {value}"
        if re.search(rf"(?m)^{key} = .*$", head):
            head = re.sub(rf"(?m)^{key} = .*$", lambda _, line=line: line, head)
        else:  # a new measurement goes after the lesson's other fields, before its pitfalls
            body = head.rstrip("\n")
            head = body + "\n" + line + head[len(body) :]
    blocks[index] = head + separator + tail
    path.write_text("".join(blocks), encoding="utf-8")
