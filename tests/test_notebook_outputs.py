"""The committed notebooks are whole: run top to bottom once, no errors, and the shared parts in sync."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools.notebook_format import SETUP_MARKER, colab_badge, setup_cell_source  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "no notebooks/NN_*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_outputs_come_from_one_clean_run(path: Path) -> None:
    nb = json.loads(path.read_text())
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    counts = [cell.get("execution_count") for cell in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: execution counts {counts}; run `make execute NB={path.relative_to(ROOT)}`"
    )
    errors = [o for cell in code for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{path.name}: holds an error output: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    text = "".join(
        "".join(output.get("text", "")) for cell in code for output in cell.get("outputs", []) if "text" in output
    )
    assert "⚠ Check failed" not in text, f"{path.name}: a check failed on its own code (its verdict says so)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_shared_parts_are_current(path: Path) -> None:
    nb = json.loads(path.read_text())
    first_code = next(cell for cell in nb["cells"] if cell["cell_type"] == "code")
    assert "".join(first_code["source"]) == setup_cell_source(), f"{path.name}: the set-up cell is not the standard one"
    assert SETUP_MARKER in "".join(first_code["source"])
    assert colab_badge(path.name) in "".join(nb["cells"][0]["source"]), f"{path.name}: Colab badge missing or stale"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_images_are_small(path: Path) -> None:
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                assert len(png) < 200_000, f"{path.name}: an image of {len(png)} base64 bytes; keep dpi about 80"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_plots_were_rendered(path: Path) -> None:
    """A notebook that draws course plots must carry them (an Agg backend would silently drop them)."""
    nb = json.loads(path.read_text())
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    draws = sum("finish(" in "".join(cell["source"]) or "plots." in "".join(cell["source"]) for cell in code)
    images = sum("image/png" in output.get("data", {}) for cell in code for output in cell.get("outputs", []))
    if draws:
        assert images, f"{path.name} draws plots but holds no image output; re-run it with `make execute`"
