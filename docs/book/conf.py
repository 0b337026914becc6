"""Sphinx configuration of the course book (`make book`): the README, the executed lessons, the cheat sheet, the
workshop guide and the other pages under docs/.

Built from the repository root (`sphinx-build -c docs/book . _build/book`), so the README's links
(`notebooks/NN_topic.ipynb`, `docs/cheatsheet.md`) and the lessons' links (`../README.md#syllabus`) resolve as they do
on GitHub. The notebooks are rendered with their committed outputs (`nb_execution_mode = "off"`): nothing runs.
Nothing on a page is fetched from outside the book: the Colab badge image is swapped for the local copy
in `_static/` while the sources are read (the files themselves are not changed) and MathJax is not loaded.
The set-up cell's code is hidden (tag `hide-input`) behind one line that says what it does (`SETUP_PROMPT`), and
data the lessons hand to the course's tools (mimetypes `application/vnd.trainer-course.*`) is not drawn.
`_static/course.css` widens the content column so that 88-character code lines and the tables fit at 1280 px.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLAB_BADGE_URL = "https://colab.research.google.com/assets/colab-badge.svg"
LOCAL_BADGE = "/docs/book/_static/colab-badge.svg"  # relative to the source folder, the repository root
# The reference pages, in this order, each where it exists (a participant copy has no workshop guide).
REFERENCE_PAGES = ("docs/setup", "docs/cheatsheet", "docs/workshop", "docs/ladder", "docs/authoring", "data/README")
EXTRA_PAGES = tuple(page for page in REFERENCE_PAGES if (ROOT / f"{page}.md").is_file())
SETUP_PROMPT = "Set-up cell: fetches the course on Colab, seeds, picks the device and profile (show the code)"
SETUP_PROMPT_HIDE = "Hide the set-up code"

project = "Customising the Hugging Face Trainer"
author = "The trainer-workbook authors"
copyright = "the trainer-workbook authors, Apache-2.0"

extensions = ["myst_nb"]
root_doc = "README"
include_patterns = ["README.md", "notebooks/[0-9][0-9]_*.ipynb", *(f"{page}.md" for page in EXTRA_PAGES)]
exclude_patterns = [
    "_build",
    ".venv",
    ".venv-*",
    "runs",
    "data/cache",
    "participant_copies",
    "**/.ipynb_checkpoints",
]
templates_path = ["_templates"]  # this folder and the next are relative to docs/book
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_favicon = "_static/favicon.svg"  # a local icon: otherwise browsers ask for /favicon.ico and log a 404
html_additional_pages = {"index": "redirect.html"}  # index.html opens the README page

nb_execution_mode = "off"
nb_merge_streams = True
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # the lessons' titles are `# NN · Title` and sections `## k.`: not a warning

html_theme = "sphinx_book_theme"
html_title = project
html_context = {"default_mode": "auto"}  # without it the theme logs "invalid theme mode" on a first visit
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "use_download_button": True,
    "use_fullscreen_button": False,
}
html_show_sourcelink = False
html_copy_source = True  # the download button offers the page source (the .ipynb)


def syllabus_order() -> list[str]:
    """The lessons' document names in syllabus order, from the registry (lessons.toml)."""
    import sys

    sys.path.insert(0, str(ROOT))
    from course_facts.registry import lessons

    return [f"notebooks/{lesson.stem}" for lesson in lessons()]


def _toctree(caption: str, pages: list[str]) -> str:
    return "\n\n```{toctree}\n:hidden:\n:caption: " + caption + "\n\n" + "\n".join(pages) + "\n```\n"


DATA_MIMETYPE_PREFIX = "application/vnd.trainer-course."  # data a lesson hands to the course's tools


def prepared_notebook(notebook_json: str) -> str:
    """The notebook as the book shows it; the file is not changed. The set-up cell's toggle says what the cell
    does (myst-nb's cell-level ``code_prompt_show``) instead of "Show code cell source", and outputs lose the
    course's own data mimetypes (lesson 06's control matrix for the cheat sheet), which have nothing to draw
    (myst-nb would warn about an unknown mime type)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from notebook_format import SETUP_MARKER

    notebook = json.loads(notebook_json)
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        if "".join(cell.get("source", "")).startswith(SETUP_MARKER):
            prompts = {"code_prompt_show": SETUP_PROMPT, "code_prompt_hide": SETUP_PROMPT_HIDE}
            cell.setdefault("metadata", {}).setdefault("mystnb", {}).update(prompts)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for mimetype in [name for name in data if name.startswith(DATA_MIMETYPE_PREFIX)]:
                del data[mimetype]
    return json.dumps(notebook, ensure_ascii=False)


def _read_source(app, docname: str, source: list[str]) -> None:
    """Use the local badge image; label the set-up cell; give the README (the landing page) the table of
    contents."""
    source[0] = source[0].replace(COLAB_BADGE_URL, LOCAL_BADGE)
    if docname.startswith("notebooks/"):
        source[0] = prepared_notebook(source[0])
    if docname == root_doc:
        source[0] += _toctree("Lessons", syllabus_order()) + _toctree("Reference", list(EXTRA_PAGES))


def setup(app) -> dict[str, bool]:
    from ipython_pygments_lexers import IPython3Lexer

    # The notebooks' language_info names plain "python"; cells with IPython magics (%%writefile) need this lexer.
    app.add_lexer("python", IPython3Lexer)
    app.connect("source-read", _read_source)
    return {"parallel_read_safe": True}
