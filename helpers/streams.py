"""A data stream for lesson 11: the reviews in a fixed order, read one at a time, counting what it reads.

A stream (a ``torch.utils.data.IterableDataset``: a file read line by line, a network source) has no indices, so a
run resumed mid-epoch cannot skip to a batch: ``Trainer.get_resumed_dataloader``'s default reads the batches
trained before the cut again and throws them away. :class:`ReviewStream` stands in for a learner's stream that can
seek (``start``), and counts the examples it yields (``read``), so that the lesson can show what an override of
``get_resumed_dataloader`` saves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from torch.utils.data import IterableDataset


class ReviewStream(IterableDataset):
    """``rows`` (a ``datasets.Dataset`` or any sequence of examples) yielded in order, from ``start``.

    Attributes:
        start: where the next pass begins; it holds for one pass (a seek), then the stream starts at 0 again.
        read: how many examples the stream has yielded so far, over every pass.
    """

    def __init__(self, rows: Sequence[Any]) -> None:
        self.rows, self.start, self.read = rows, 0, 0

    def __iter__(self) -> Iterator[Any]:
        start, self.start = self.start, 0
        if not 0 <= start <= len(self.rows):
            raise ValueError(f"ReviewStream: start={start} is outside the {len(self.rows)} rows; seek within them")
        for index in range(start, len(self.rows)):
            self.read += 1
            yield self.rows[index]
