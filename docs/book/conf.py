"""Sphinx configuration of the course book (`make book`): the README, the executed lessons, the cheat sheet.

Built from the repository root (`sphinx-build -c docs/book . _build/book`), so the README's links
(`notebooks/NN_topic.ipynb`) and the lessons' links (`../README.md#syllabus`) resolve as they do on GitHub.
The notebooks are rendered with their committed outputs (`nb_execution_mode = "off"`): nothing runs.
Nothing on a page is fetched from outside the book: the Colab badge image is swapped for the local copy
in `_static/` while the sources are read (the files themselves are not changed) and MathJax is not loaded.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLAB_BADGE_URL = "https://colab.research.google.com/assets/colab-badge.svg"
LOCAL_BADGE = "/docs/book/_static/colab-badge.svg"  # relative to the source folder, the repository root
EXTRA_PAGES = ("docs/cheatsheet",)

project = "Customising the Hugging Face Trainer"
author = "The trainer-workbook authors"
copyright = "the trainer-workbook authors, Apache-2.0"

extensions = ["myst_nb"]
root_doc = "README"
include_patterns = ["README.md", "notebooks/[0-9][0-9]_*.ipynb", *(f"{page}.md" for page in EXTRA_PAGES)]
exclude_patterns = ["_build", ".venv", ".venv-latest", "runs", "data", "participant_copies", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]  # this folder and the next are relative to docs/book
html_static_path = ["_static"]
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
    from helpers.registry import lessons

    return [f"notebooks/{lesson.stem}" for lesson in lessons()]


def _toctree(caption: str, pages: list[str]) -> str:
    return "\n\n```{toctree}\n:hidden:\n:caption: " + caption + "\n\n" + "\n".join(pages) + "\n```\n"


def _read_source(app, docname: str, source: list[str]) -> None:
    """Use the local badge image; give the README (the landing page) the table of contents."""
    source[0] = source[0].replace(COLAB_BADGE_URL, LOCAL_BADGE)
    if docname == root_doc:
        source[0] += _toctree("Lessons", syllabus_order()) + _toctree("Reference", list(EXTRA_PAGES))


def setup(app) -> dict[str, bool]:
    from ipython_pygments_lexers import IPython3Lexer

    # The notebooks' language_info names plain "python"; cells with IPython magics (%%writefile) need this lexer.
    app.add_lexer("python", IPython3Lexer)
    app.connect("source-read", _read_source)
    return {"parallel_read_safe": True}
