"""Multi-turn conversations, a tokenizer with chat role tokens, and reply scoring: lesson 19's data, built offline.

No chat dataset or chat model ships with the course, so lesson 19 draws its own conversations: a system turn
gives the rule (``"reply with the largest digit"``), then 2 or 3 user turns of 2 to 5 random digits, each
answered by the assistant with the largest of them. The user's digits cannot be predicted and the
assistant's can: the loss on every token spends most of its gradient on noise. ``chat_tokenizer`` trains a BPE
tokenizer on the turns' text with the role tokens ``<|system|>``, ``<|user|>``, ``<|assistant|>`` and ``<|end|>``
(its end-of-sequence token), and no chat template: the lesson writes one. The model is lesson 18's
:func:`helpers.language_model.tiny_llama`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datasets import Dataset
    from transformers import PreTrainedTokenizerFast

ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>")
SPECIAL_TOKENS = ("<pad>", "<unk>", *ROLE_TOKENS)
SYSTEM_PROMPT = "reply with the largest digit"


def chat_sizes() -> dict[str, int]:
    """Model and data sizes for the active course profile: small on a CPU, larger on a GPU."""
    from helpers.context import active_profile

    if active_profile().on_gpu:
        return {"train_conversations": 20000, "test_conversations": 1000, "steps": 120, "batch_size": 64}
    return {"train_conversations": 1200, "test_conversations": 200, "steps": 40, "batch_size": 64}


def conversation_rows(
    count: int, seed: int, turns: tuple[int, int] = (2, 3), digits: tuple[int, int] = (2, 5)
) -> list[dict[str, list[dict[str, str]]]]:
    """``count`` rows ``{"messages": [...]}``: the system turn, then ``turns`` user turns of random digits, each
    followed by the assistant's reply, the largest of them."""
    if count < 1 or not 1 <= turns[0] <= turns[1] or not 1 <= digits[0] <= digits[1]:
        raise ValueError(
            f"need count >= 1, 1 <= turns[0] <= turns[1] and 1 <= digits[0] <= digits[1]; "
            f"got count={count}, turns={turns}, digits={digits}."
        )
    draw = random.Random(seed)
    rows = []
    for _ in range(count):
        messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        for _ in range(draw.randint(*turns)):
            values = [draw.randint(0, 9) for _ in range(draw.randint(*digits))]
            messages.append({"role": "user", "content": " ".join(map(str, values))})
            messages.append({"role": "assistant", "content": str(max(values))})
        rows.append({"messages": messages})
    return rows


def conversation_dataset(count: int, seed: int, **kwargs: Any) -> Dataset:
    """:func:`conversation_rows` as a ``datasets.Dataset`` with one column, ``messages``."""
    from datasets import Dataset

    return Dataset.from_list(conversation_rows(count, seed, **kwargs))


def chat_tokenizer(conversations: Any, vocab_size: int = 64) -> PreTrainedTokenizerFast:
    """A BPE tokenizer trained on the turns' text (rows with ``messages``), with the role tokens as special tokens,
    ``<|end|>`` as its end-of-sequence token and ``<pad>`` for padding; it has no chat template."""
    from helpers.language_model import train_tokenizer

    corpus = [message["content"] for row in conversations for message in row["messages"]]
    if not corpus:
        raise ValueError("chat_tokenizer needs at least one conversation to learn its vocabulary from.")
    return train_tokenizer(corpus, vocab_size, special_tokens=SPECIAL_TOKENS, eos_token="<|end|>")


def split_last_reply(rows: Any) -> tuple[list[list[dict[str, str]]], list[str]]:
    """Each conversation without its last assistant turn (what the model is asked) and that turn's text."""
    asked, replies = [], []
    for row in rows:
        messages = list(row["messages"])
        if not messages or messages[-1]["role"] != "assistant":
            raise ValueError("each conversation must end with an assistant turn, the reply to score.")
        asked.append(messages[:-1])
        replies.append(messages[-1]["content"])
    return asked, replies


def reply_accuracy(replies: list[str], references: list[str]) -> float:
    """The share of replies equal to their reference, spaces at either end ignored."""
    if len(replies) != len(references) or not references:
        raise ValueError(f"need as many replies as references, got {len(replies)} and {len(references)}.")
    return sum(a.strip() == b.strip() for a, b in zip(replies, references, strict=True)) / len(references)


def majority_reply_share(rows: Any) -> float:
    """The accuracy of always giving the most common last reply (the baseline a model must beat)."""
    replies = [row["messages"][-1]["content"].strip() for row in rows]
    if not replies:
        raise ValueError("majority_reply_share needs at least one conversation.")
    return max(replies.count(r) for r in set(replies)) / len(replies)
