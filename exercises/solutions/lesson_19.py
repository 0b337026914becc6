"""Reference solutions for the exercises of lesson 19."""

from __future__ import annotations

from typing import Any

import torch


def chat_labels(tokenizer: Any, messages: list[dict[str, str]]) -> tuple[list[int], list[int]]:
    """The rendered conversation's ids, and labels equal to them on each assistant reply and its closing tokens."""

    def length(turns: list[dict[str, str]], **kwargs: Any) -> int:
        return len(tokenizer.apply_chat_template(turns, **kwargs)["input_ids"])

    ids = tokenizer.apply_chat_template(messages)["input_ids"]
    labels = [-100] * len(ids)
    for k, message in enumerate(messages):
        if message["role"] == "assistant":
            start, end = length(messages[:k], add_generation_prompt=True), length(messages[: k + 1])
            labels[start:end] = ids[start:end]
    return ids, labels


def reply_texts(model: Any, tokenizer: Any, conversations: list[list[dict[str, str]]]) -> list[str]:
    """Greedy replies of at most 5 new tokens to each conversation, rendered with the generation prompt."""
    batch = tokenizer.apply_chat_template(
        conversations,
        add_generation_prompt=True,
        padding=True,
        tokenizer_kwargs={"padding_side": "left"},
        return_tensors="pt",
    )
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=5, do_sample=False)
    return tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
