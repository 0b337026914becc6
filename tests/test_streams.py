"""helpers.streams.ReviewStream: in order, a seek holds for one pass, every yielded example counted."""

from __future__ import annotations

import pytest
import torch

from helpers.streams import ReviewStream


def test_a_stream_yields_in_order_seeks_for_one_pass_and_counts_its_reads() -> None:
    stream = ReviewStream([{"x": i} for i in range(6)])
    assert [row["x"] for row in stream] == [0, 1, 2, 3, 4, 5] and stream.read == 6
    stream.start = 4
    assert [row["x"] for row in stream] == [4, 5] and stream.read == 8
    assert [row["x"] for row in stream] == list(range(6)), "a seek holds for one pass only"
    assert stream.read == 14


def test_a_dataloader_batches_the_stream_and_a_bad_seek_says_what_to_do() -> None:
    stream = ReviewStream([{"x": torch.tensor(i)} for i in range(5)])
    batches = [batch["x"].tolist() for batch in torch.utils.data.DataLoader(stream, batch_size=2)]
    assert batches == [[0, 1], [2, 3], [4]] and stream.read == 5
    stream.start = 9
    with pytest.raises(ValueError, match="start=9 is outside the 5 rows; seek within them"):
        next(iter(stream))
