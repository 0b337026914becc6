"""Generated blocks inside hand-written pages: the text between two HTML-comment markers, rewritten by a tool.

The README's syllabus and set-up facts and the workshop guide's agendas and planning table are written this way:
the page is prose a person edits, and the block inside it is written only by its tool, from measured figures.
"""

from __future__ import annotations


class MissingMarkers(ValueError):
    """A page has no place for a generated block: one of its two markers is missing."""


def replace_block(text: str, start: str, end: str, body: str, page: str = "the page") -> str:
    """``text`` with what stands between the markers ``start`` and ``end`` replaced by ``body``.

    Raises:
        MissingMarkers: ``text`` lacks ``start`` or ``end``; the message names ``page`` and says what to add.
    """
    if start not in text or end not in text:
        raise MissingMarkers(f"{page} has no {start} ... {end} markers; put them where the generated block belongs.")
    before, rest = text.split(start, 1)
    return before + start + "\n" + body + "\n" + end + rest.split(end, 1)[1]
