"""Lesson 19's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import torch
from exercise_cases import answer_tests

# ---- exercise 1 ---------------------------------------------------------------------------------------------------


def labels_from_text_offsets(tokenizer, messages):
    """Find each reply in the rendered text, then map characters to tokens through the offsets."""
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    spans = []
    for k, message in enumerate(messages):
        if message["role"] == "assistant":
            start = len(tokenizer.apply_chat_template(messages[:k], tokenize=False, add_generation_prompt=True))
            end = len(tokenizer.apply_chat_template(messages[: k + 1], tokenize=False))
            spans.append((start, end))
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    labels = [
        token if any(s <= a < e for s, e in spans) else -100
        for token, (a, _) in zip(encoded["input_ids"], encoded["offset_mapping"])
    ]
    return encoded["input_ids"], labels


def labels_with_tensors(tokenizer, messages):
    ids = torch.tensor(tokenizer.apply_chat_template(messages)["input_ids"])
    keep = torch.zeros_like(ids, dtype=torch.bool)
    for k in [i for i, m in enumerate(messages) if m["role"] == "assistant"]:
        before = tokenizer.apply_chat_template(messages[:k], add_generation_prompt=True)["input_ids"]
        after = tokenizer.apply_chat_template(messages[: k + 1])["input_ids"]
        keep[len(before) : len(after)] = True
    return ids, torch.where(keep, ids, torch.full_like(ids, -100))


def labels_shifted(tokenizer, messages):
    ids, labels = labels_with_tensors(tokenizer, messages)
    return ids.tolist(), labels.tolist()[1:] + [-100]


def labels_system_included(tokenizer, messages):
    ids = tokenizer.apply_chat_template(messages)["input_ids"]
    labels = list(ids)
    for k, message in enumerate(messages):
        if message["role"] == "user":
            start = len(tokenizer.apply_chat_template(messages[:k])["input_ids"]) if k else 0
            end = len(tokenizer.apply_chat_template(messages[: k + 1])["input_ids"])
            labels[start:end] = [-100] * (end - start)
    return ids, labels


def labels_with_role_token(tokenizer, messages):
    ids = tokenizer.apply_chat_template(messages)["input_ids"]
    labels = [-100] * len(ids)
    for k, message in enumerate(messages):
        if message["role"] == "assistant":
            start = len(tokenizer.apply_chat_template(messages[:k])["input_ids"])
            end = len(tokenizer.apply_chat_template(messages[: k + 1])["input_ids"])
            labels[start:end] = ids[start:end]
    return ids, labels


def labels_content_only(tokenizer, messages):
    ids = tokenizer.apply_chat_template(messages)["input_ids"]
    labels = [-100] * len(ids)
    for k, message in enumerate(messages):
        if message["role"] == "assistant":
            start = len(tokenizer.apply_chat_template(messages[:k], add_generation_prompt=True)["input_ids"])
            width = len(tokenizer(message["content"], add_special_tokens=False)["input_ids"])
            labels[start : start + width] = ids[start : start + width]
    return ids, labels


def labels_from_assistant_mask(tokenizer, messages):
    out = tokenizer.apply_chat_template(messages, return_assistant_tokens_mask=True)
    return out["input_ids"], [i if m else -100 for i, m in zip(out["input_ids"], out["assistant_masks"])]


# ---- exercise 2 ---------------------------------------------------------------------------------------------------


def replies_one_at_a_time(model, tokenizer, conversations):
    replies = []
    for conversation in conversations:
        ids = tokenizer.apply_chat_template(conversation, add_generation_prompt=True, return_tensors="pt")
        out = model.generate(**ids, max_new_tokens=5, do_sample=False)
        replies.append(tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True))
    return replies


def replies_left_padded_tokenizer(model, tokenizer, conversations):
    tokenizer.padding_side = "left"
    texts = [tokenizer.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in conversations]
    batch = tokenizer(texts, padding=True, add_special_tokens=False, return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], max_new_tokens=5, do_sample=False
        )
    return [tokenizer.decode(row[batch["input_ids"].shape[1] :], skip_special_tokens=True) for row in out]


def replies_no_generation_prompt(model, tokenizer, conversations):
    tokenizer.padding_side = "left"
    batch = tokenizer.apply_chat_template(conversations, padding=True, return_tensors="pt")
    out = model.generate(**batch, max_new_tokens=5, do_sample=False)
    return tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)


def replies_right_padded(model, tokenizer, conversations):
    batch = tokenizer.apply_chat_template(conversations, add_generation_prompt=True, padding=True, return_tensors="pt")
    out = model.generate(**batch, max_new_tokens=5, do_sample=False)
    return tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)


def replies_with_the_prompt(model, tokenizer, conversations):
    tokenizer.padding_side = "left"
    batch = tokenizer.apply_chat_template(conversations, add_generation_prompt=True, padding=True, return_tensors="pt")
    out = model.generate(**batch, max_new_tokens=5, do_sample=False)
    return tokenizer.batch_decode(out, skip_special_tokens=True)


CORRECT = {
    "q1": [labels_from_text_offsets, labels_with_tensors],
    "q2": [replies_one_at_a_time, replies_left_padded_tokenizer],
}

MISTAKES = {
    "q1": [
        (labels_shifted, "shifted by one token"),
        (labels_system_included, "tokens of the system turn have labels"),
        (labels_with_role_token, "the <|assistant|> role token has a label"),
        (labels_content_only, "the model would never learn to stop"),
        (labels_from_assistant_mask, "no {% generation %} markers"),
    ],
    "q2": [
        (replies_no_generation_prompt, "add_generation_prompt=True"),
        (replies_right_padded, "pad on the left for generation"),
        (replies_with_the_prompt, "decode only the tokens after the prompt"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
