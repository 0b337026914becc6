"""Lesson 18's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import numpy as np
import torch
from exercise_cases import answer_tests
from torch.nn.utils.rnn import pad_sequence

# ---- exercise 1 ---------------------------------------------------------------------------------------------------


def collate_with_pad_sequence(rows, pad_id, eos_id):
    ids = [torch.tensor(r["prompt_ids"] + r["completion_ids"] + [eos_id]) for r in rows]
    labels = [torch.tensor([-100] * len(r["prompt_ids"]) + r["completion_ids"] + [eos_id]) for r in rows]
    input_ids = pad_sequence(ids, batch_first=True, padding_value=pad_id)
    mask = pad_sequence([torch.ones_like(i) for i in ids], batch_first=True, padding_value=0)
    return {"input_ids": input_ids, "attention_mask": mask, "labels": pad_sequence(labels, True, -100)}


def collate_left_padded_to_eight(rows, pad_id, eos_id):
    longest = max(len(r["prompt_ids"]) + len(r["completion_ids"]) + 1 for r in rows)
    width = -(-longest // 8) * 8
    batch = {"input_ids": [], "attention_mask": [], "labels": []}
    for r in rows:
        seq = r["prompt_ids"] + r["completion_ids"] + [eos_id]
        fill = width - len(seq)
        batch["input_ids"].append([pad_id] * fill + seq)
        batch["attention_mask"].append([0] * fill + [1] * len(seq))
        batch["labels"].append([-100] * (fill + len(r["prompt_ids"])) + r["completion_ids"] + [eos_id])
    return {key: torch.tensor(value) for key, value in batch.items()}


def collate_appends_in_place(rows, pad_id, eos_id):
    """Appends eos_id to each row's completion in place (the rows are the collator's to change): right too."""
    for r in rows:
        r["completion_ids"].append(eos_id)
    width = max(len(r["prompt_ids"]) + len(r["completion_ids"]) for r in rows)
    ids, mask, labels = [], [], []
    for r in rows:
        seq, fill = r["prompt_ids"] + r["completion_ids"], width - len(r["prompt_ids"]) - len(r["completion_ids"])
        ids.append(seq + [pad_id] * fill)
        mask.append([1] * len(seq) + [0] * fill)
        labels.append([-100] * len(r["prompt_ids"]) + r["completion_ids"] + [-100] * fill)
    return {"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask), "labels": torch.tensor(labels)}


def collate_every_label_masked(rows, pad_id, eos_id):
    batch = collate_with_pad_sequence(rows, pad_id, eos_id)
    batch["labels"] = torch.full_like(batch["input_ids"], -100)
    return batch


def collate_prompt_in_labels(rows, pad_id, eos_id):
    batch = collate_with_pad_sequence(rows, pad_id, eos_id)
    batch["labels"] = torch.where(batch["attention_mask"] == 1, batch["input_ids"], -100)
    return batch


def collate_no_eos(rows, pad_id, eos_id):
    ids = [torch.tensor(r["prompt_ids"] + r["completion_ids"]) for r in rows]
    labels = [torch.tensor([-100] * len(r["prompt_ids"]) + r["completion_ids"]) for r in rows]
    return {
        "input_ids": pad_sequence(ids, batch_first=True, padding_value=pad_id),
        "attention_mask": pad_sequence([torch.ones_like(i) for i in ids], batch_first=True),
        "labels": pad_sequence(labels, batch_first=True, padding_value=-100),
    }


def collate_pad_labelled(rows, pad_id, eos_id):
    batch = collate_with_pad_sequence(rows, pad_id, eos_id)
    batch["labels"] = torch.where(batch["attention_mask"] == 1, batch["labels"], pad_id)
    return batch


def collate_zero_padding(rows, pad_id, eos_id):
    return collate_with_pad_sequence(rows, 0, eos_id)


# ---- exercise 2 ---------------------------------------------------------------------------------------------------


def exact_match_by_text(tokenizer):
    def compute_metrics(prediction):
        scores = []
        for row, labels in zip(prediction.predictions, prediction.label_ids):
            prompt_length = int(np.argmax(labels != -100))
            tokens = row[(row != -100) & (row != tokenizer.pad_token_id)][prompt_length:].tolist()
            if tokenizer.eos_token_id in tokens:
                tokens = tokens[: tokens.index(tokenizer.eos_token_id)]
            wanted = tokenizer.decode(labels[labels != -100], skip_special_tokens=True)
            scores.append(tokenizer.decode(tokens).strip() == wanted.strip())
        return {"exact_match": float(np.mean(scores))}

    return compute_metrics


def exact_match_by_ids(tokenizer):
    pad = tokenizer.pad_token_id

    def compute_metrics(prediction):
        right = 0
        for row, labels in zip(prediction.predictions, prediction.label_ids):
            completion = [t for t in labels if t != -100]
            start = list(labels).index(completion[0])
            body = [t for t in row if t not in (-100, pad)][start:]
            right += body[: len(completion)] == completion
        return {"exact_match": right / len(prediction.predictions)}

    return compute_metrics


def exact_match_prompt_kept(tokenizer):
    def compute_metrics(prediction):
        said = tokenizer.batch_decode(
            np.where(prediction.predictions < 0, tokenizer.pad_token_id, prediction.predictions),
            skip_special_tokens=True,
        )
        wanted = tokenizer.batch_decode(
            np.where(prediction.label_ids < 0, tokenizer.pad_token_id, prediction.label_ids), skip_special_tokens=True
        )
        return {"exact_match": float(np.mean([s.strip() == w.strip() for s, w in zip(said, wanted)]))}

    return compute_metrics


def exact_match_no_stop(tokenizer):
    def compute_metrics(prediction):
        hits = []
        for row, labels in zip(prediction.predictions, prediction.label_ids):
            prompt_length = int(np.argmax(labels != -100))
            tokens = row[(row != -100) & (row != tokenizer.pad_token_id)][prompt_length:]
            said = tokenizer.decode(tokens, skip_special_tokens=True).strip()
            hits.append(said == tokenizer.decode(labels[labels != -100], skip_special_tokens=True).strip())
        return {"exact_match": float(np.mean(hits))}

    return compute_metrics


def _cut(row, labels, pad, eos):
    prompt_length = int(np.argmax(labels != -100))
    tokens = [t for t in row.tolist() if t not in (-100, pad)][prompt_length:]
    return tokens[: tokens.index(eos)] if eos in tokens else tokens


def exact_match_eos_in_labels(tokenizer):
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id

    def compute_metrics(prediction):
        hits = [
            _cut(row, labels, pad, eos) == labels[labels != -100].tolist()
            for row, labels in zip(prediction.predictions, prediction.label_ids)
        ]
        return {"exact_match": sum(hits) / len(hits)}

    return compute_metrics


def exact_match_left_pads_kept(tokenizer):
    eos = tokenizer.eos_token_id

    def compute_metrics(prediction):
        hits = 0
        for row, labels in zip(prediction.predictions, prediction.label_ids):
            start = int(np.argmax(labels != -100))
            tokens = row[row != -100][start:].tolist()  # the left pads are still there
            tokens = tokens[: tokens.index(eos)] if eos in tokens else tokens
            hits += tokens == [t for t in labels.tolist() if t not in (-100, eos)]
        return {"exact_match": hits / len(prediction.label_ids)}

    return compute_metrics


def exact_match_argmax(tokenizer):
    def compute_metrics(prediction):
        said = prediction.predictions.argmax(-1)  # as if they were logits
        wanted = np.array([row[row != -100][0] for row in prediction.label_ids])
        return {"exact_match": float((said == wanted).mean())}

    return compute_metrics


def exact_match_decodes_minus_100(tokenizer):
    def compute_metrics(prediction):
        said = tokenizer.batch_decode(prediction.predictions, skip_special_tokens=True)
        return {"exact_match": float(len(said) > 0)}

    return compute_metrics


# ---- exercise 3 ---------------------------------------------------------------------------------------------------


def reward_from_kwargs(completions, **kwargs):
    out = []
    for text, right in zip(completions, kwargs["answer"]):
        text = text.strip()
        if text == right.strip():
            out.append(1.0)
        elif text in "0123456789" and text:
            out.append(0.2)
        else:
            out.append(0.0)
    return out


def reward_with_numpy(prompts, completions, answer, trainer_state, **rest):
    said = np.array([c.strip() for c in completions])
    right = np.array([a.strip() for a in answer])
    single = np.array([len(s) == 1 and s.isdigit() for s in said])
    return np.where(said == right, 1.0, np.where(single, 0.2, 0.0)).tolist()


async def reward_async(completions, answer, **kwargs):
    # an LLM judge would await here; trl awaits an async reward function
    return [
        1.0 if c.strip() == a.strip() else (0.2 if c.strip() in set("0123456789") else 0.0)
        for c, a in zip(completions, answer)
    ]


def reward_float32_tensor(completions, answer, **kwargs):
    said = [c.strip() for c in completions]
    right = torch.tensor([s == a.strip() for s, a in zip(said, answer)], dtype=torch.float32)
    single = torch.tensor([len(s) == 1 and s.isdigit() for s in said], dtype=torch.float32)
    return right + 0.2 * single * (1 - right)


def reward_without_kwargs(completions, answer):
    return [1.0 if c.strip() == a.strip() else 0.2 for c, a in zip(completions, answer)]


def reward_reads_completion_column(completions, **kwargs):
    return [1.0 if c.strip() == a.strip() else 0.0 for c, a in zip(completions, kwargs["completion"])]


def reward_unstripped(completions, answer, **kwargs):
    return [
        1.0 if c == a.strip() else 0.2 if len(c.strip()) == 1 and c.strip().isdigit() else 0.0
        for c, a in zip(completions, answer)
    ]


def reward_any_digit_start(completions, answer, **kwargs):
    return [
        1.0 if c.strip() == a.strip() else 0.2 if c.strip()[:1].isdigit() else 0.0 for c, a in zip(completions, answer)
    ]


def reward_as_text(completions, answer, **kwargs):
    return [
        "1.0" if c.strip() == a.strip() else "0.2" if len(c.strip()) == 1 and c.strip().isdigit() else "0.0"
        for c, a in zip(completions, answer)
    ]


def reward_dict(completions, answer, **kwargs):
    said = [c.strip() for c in completions]
    rewards = [1.0 if s == a.strip() else 0.2 if len(s) == 1 and s.isdigit() else 0.0 for s, a in zip(said, answer)]
    return {"rewards": rewards}


def reward_parses_int(completions, answer, **kwargs):
    rewards = []
    for c, a in zip(completions, answer):
        try:
            rewards.append(1.0 if int(c) == int(a) else 0.2 if int(c) < 10 else 0.0)
        except ValueError:
            rewards.append(0.0)
    return rewards


def reward_mean(completions, answer, **kwargs):
    return sum(c.strip() == a.strip() for c, a in zip(completions, answer)) / len(completions)


CORRECT = {
    "q1": [collate_with_pad_sequence, collate_left_padded_to_eight, collate_appends_in_place],
    "q2": [exact_match_by_text, exact_match_by_ids],
    "q3": [reward_from_kwargs, reward_with_numpy, reward_async, reward_float32_tensor],
}

MISTAKES = {
    "q1": [
        (collate_prompt_in_labels, "the prompt's labels must be -100"),
        (collate_no_eos, "append it to the completion"),
        (collate_pad_labelled, "the padding must have the label -100"),
        (collate_zero_padding, "pad with pad_id"),
        (collate_every_label_masked, "every label of a row is -100"),
    ],
    "q2": [
        (exact_match_prompt_kept, "the prompt echoed back"),
        (exact_match_no_stop, "stop each prediction at its first EOS"),
        (exact_match_decodes_minus_100, "no tokenizer decodes -100"),
        (exact_match_eos_in_labels, "compare with the labels without their EOS"),
        (exact_match_left_pads_kept, "drop the left padding (pad_token_id) before you cut off the prompt"),
        (exact_match_argmax, "the predictions are token ids already"),
    ],
    "q3": [
        (reward_without_kwargs, "take the ones you need by name and the rest with **kwargs"),
        (reward_reads_completion_column, "The dataset's completion column is never passed"),
        (reward_unstripped, "strip the spaces at either end"),
        (reward_any_digit_start, "0.2 for a wrong single digit"),
        (reward_mean, "return one reward per completion"),
        (reward_as_text, "return numbers (float), not text"),
        (reward_dict, "returned a dict (keys"),
        (reward_parses_int, "do not parse it as a number"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
