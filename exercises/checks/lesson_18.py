"""Exercises of lesson 18 (language models in the Trainer): a completion-only collator judged by the batches it
builds (and fed to a small Llama), an exact-match ``compute_metrics`` over generated ids in a real
``EvalPrediction``, and a GRPO reward function called exactly as ``GRPOTrainer`` calls it."""

from __future__ import annotations

import copy
import math
import random
from typing import Any

from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_18 as solutions

CASES_SEED = 1717  # the check draws its cases from this seed each time it runs, never the lesson's rows
# GRPOTrainer keeps rewards in float32 (torch.tensor(..., dtype=torch.float32)): 0.2 there is 0.20000000298...;
# the check compares in float32 too, with a margin far below the 0.2 between two rewards.
REWARD_TOLERANCE = 1e-6


# ---- exercise 1: collate_completions(rows, pad_id, eos_id) -------------------------------------------------------


def collator_cases(seed: int = CASES_SEED) -> list[tuple[list[dict[str, list[int]]], int, int]]:
    """Three batches of tokenized rows with drawn pad and EOS ids (neither 0 nor 1, never a row's token)."""
    draw = random.Random(seed)
    cases = []
    for size in (3, 5, 4):
        pad_id, eos_id = draw.sample(range(40, 48), 2)
        rows = [
            {
                "prompt_ids": [draw.randint(2, 39) for _ in range(draw.randint(2, 9))],
                "completion_ids": [draw.randint(2, 39) for _ in range(draw.randint(1, 4))],
            }
            for _ in range(size)
        ]
        cases.append((rows, pad_id, eos_id))
    return cases


def _as_rows(batch: Any, key: str, size: int) -> list[list[int]]:
    import torch

    try:
        value = batch[key]
    except (KeyError, TypeError, IndexError):
        raise Wrong(f"your batch has no {key!r}; return a dict with input_ids, attention_mask and labels.") from None
    if not torch.is_tensor(value) or value.dim() != 2 or value.shape[0] != size:
        raise Wrong(f"batch[{key!r}] should be a 2-D tensor with one row per example ({size}), got {value!r:.80}.")
    return value.tolist()


def _check_collator(answer: Any) -> None:
    import torch

    from helpers.language_model import tiny_llama

    if not callable(answer):
        raise Wrong("collate_completions should be a function: def collate_completions(rows, pad_id, eos_id): ...")
    for rows, pad_id, eos_id in collator_cases():
        with learner_code(f"calling collate_completions(rows, pad_id={pad_id}, eos_id={eos_id})"):
            # a copy down to the token lists: an answer that appends eos_id to a row in place changes its own
            # rows, never the check's
            batch = answer(copy.deepcopy(rows), pad_id, eos_id)
        ids, mask, labels = (_as_rows(batch, key, len(rows)) for key in ("input_ids", "attention_mask", "labels"))
        for row, row_ids, row_mask, row_labels in zip(rows, ids, mask, labels, strict=True):
            prompt, answer_ids = row["prompt_ids"], row["completion_ids"]
            kept = [i for i, bit in enumerate(row_mask) if bit == 1]
            tokens = [row_ids[i] for i in kept]
            if tokens == prompt + answer_ids:
                raise Wrong(
                    "your sequences end without eos_id: append it to the completion (the model learns to stop)."
                )
            if tokens != prompt + answer_ids + [eos_id]:
                raise Wrong(
                    "where attention_mask is 1, input_ids should be the prompt, the completion and eos_id; "
                    f"got {tokens} for a row with prompt {prompt} and completion {answer_ids}."
                )
            if kept != list(range(kept[0], kept[0] + len(kept))):
                raise Wrong("attention_mask must be 1 on the row's tokens, in one block, and 0 on the padding.")
            padding = [i for i, bit in enumerate(row_mask) if bit != 1]
            if any(row_ids[i] != pad_id for i in padding):
                raise Wrong(f"pad with pad_id ({pad_id}): the padding holds {[row_ids[i] for i in padding]}.")
            if any(row_labels[i] != -100 for i in padding):
                raise Wrong("the padding must have the label -100 too: pad_id is a real token id the loss would learn.")
            wanted = [-100] * len(prompt) + answer_ids + [eos_id]
            got = [row_labels[i] for i in kept]
            if all(label == -100 for label in got):
                raise Wrong(
                    "every label of a row is -100, so the loss has nothing to learn: keep -100 on the prompt and the "
                    "padding only; the completion and eos_id are labelled with their own ids."
                )
            if got[: len(prompt)] != [-100] * len(prompt):
                raise Wrong("the prompt's labels must be -100: the loss should train the completion only.")
            if got != wanted:
                shown = wanted[len(prompt) :], got[len(prompt) :]
                raise Wrong(f"the labels of the completion and EOS should be their ids {shown[0]}, got {shown[1]}.")
        with torch.random.fork_rng():  # the learner's random state stays as it was
            model = tiny_llama(_VocabOf(48), seed=0, hidden=32, layers=1)
        with torch.no_grad(), learner_code("running a small Llama on your batch"):
            loss = model(**{key: batch[key] for key in ("input_ids", "attention_mask", "labels")}).loss
        if not math.isfinite(float(loss)):
            raise Wrong(f"a small Llama gives a loss of {float(loss)} on your batch; check the labels.")


class _VocabOf:
    """Just enough of a tokenizer for tiny_llama: a length and the special ids."""

    def __init__(self, size: int) -> None:
        self.size, self.pad_token_id, self.eos_token_id = size, None, None

    def __len__(self) -> int:
        return self.size


# ---- exercise 2: make_exact_match(tokenizer) ---------------------------------------------------------------------


def metric_tokenizer() -> Any:
    """A tokenizer of the max-digit task whose pad and EOS are added tokens (ids no default has)."""
    from helpers.language_model import max_digit_rows, train_tokenizer

    tokenizer = train_tokenizer(max_digit_rows(300, seed=CASES_SEED, digits=(2, 6)))
    tokenizer.add_special_tokens({"pad_token": "<fill>", "eos_token": "<stop>"})
    return tokenizer


# What a compute_metrics scores when it makes one of these mistakes, computed on the check's own cases (so that
# a message names a mistake only when the answer's scores are that mistake's, case by case).
METRIC_MISTAKES = {
    "prompt kept": "each prediction begins with the prompt echoed back; cut it off (its length is the number of "
    "-100 labels before the completion)",
    "no stop at EOS": "stop each prediction at its first EOS; what comes after it is not part of the answer",
    "EOS in labels": "compare with the labels without their EOS: the prediction, cut at its first EOS, has none",
    "left pads kept": "drop the left padding (pad_token_id) before you cut off the prompt: with the pads left in, "
    "the cut lands short of the completion on every padded row",
}


def metric_share(predictions: Any, labels: Any, tokenizer: Any, mistake: str | None = None) -> float:
    """The exact match of ``predictions`` against ``labels``, done right (``mistake=None``) or with one of
    :data:`METRIC_MISTAKES`."""
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    hits = 0
    for row, row_labels in zip(predictions.tolist(), labels.tolist(), strict=True):
        prompt_length = next(i for i, label in enumerate(row_labels) if label != -100)
        wanted = [label for label in row_labels if label != -100 and (label != eos or mistake == "EOS in labels")]
        tokens = [t for t in row if t != -100 and (t != pad or mistake == "left pads kept")]
        if mistake != "prompt kept":
            tokens = tokens[prompt_length:]
        if mistake == "no stop at EOS":  # special tokens skipped, the rest kept (decode(skip_special_tokens=True))
            tokens = [t for t in tokens if t not in (eos, pad)]
        elif eos in tokens:
            tokens = tokens[: tokens.index(eos)]
        if mistake == "left pads kept":
            tokens = [t for t in tokens if t != pad]
        hits += tokens == wanted
    return hits / len(predictions)


def metric_cases(tokenizer: Any, seed: int = CASES_SEED) -> list[tuple[Any, Any, float, dict[str, float]]]:
    """Drawn evaluation sets as the Trainer hands them over: (predictions, labels, expected share, {mistake: share}).

    Each prediction row: left padding (none on some rows), the prompt echoed back, the generated tokens (right,
    wrong, run on without EOS, or right then EOS and more tokens), right padding; rows padded to one width with
    -100. The shares of :data:`METRIC_MISTAKES` are computed on each set."""
    import numpy as np

    from helpers.language_model import max_digit_rows

    draw = random.Random(seed)
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    cases = []
    for size, count in ((9, 1), (12, 2), (7, 3)):
        rows = max_digit_rows(size, seed=seed + count, digits=(2, 7))
        predictions, labels = [], []
        for row in rows:
            prompt = tokenizer(row["prompt"])["input_ids"]
            answer = tokenizer(row["completion"])["input_ids"]
            wrong = tokenizer(f" {(int(row['completion']) + draw.randint(1, 8)) % 10}")["input_ids"]
            kind = draw.choice(["right", "right_then_more", "wrong", "run_on"])
            generated = {
                "right": answer + [eos, pad],
                "right_then_more": answer + [eos] + wrong,
                "wrong": wrong + [eos, pad],
                "run_on": answer + wrong + wrong,
            }[kind]
            predictions.append([pad] * draw.randint(0, 3) + prompt + generated)
            labels.append([-100] * len(prompt) + answer + [eos])
        width = max(map(len, predictions)) + draw.randint(0, 2)
        label_width = max(map(len, labels)) + draw.randint(0, 2)
        prediction_array = np.array([p + [-100] * (width - len(p)) for p in predictions])
        label_array = np.array([lab + [-100] * (label_width - len(lab)) for lab in labels])
        expected = metric_share(prediction_array, label_array, tokenizer)
        mistakes = {name: metric_share(prediction_array, label_array, tokenizer, name) for name in METRIC_MISTAKES}
        cases.append((prediction_array, label_array, expected, mistakes))
    return cases


def _watched(ids: Any, calls: list[str]) -> Any:
    """``ids`` as an array that notes in ``calls`` when ``argmax`` is taken of it (np.argmax calls the method)."""
    import numpy as np

    class WatchedIds(np.ndarray):
        def argmax(self, *args: Any, **kwargs: Any) -> Any:
            calls.append("argmax")
            return np.asarray(self).argmax(*args, **kwargs)

    return ids.copy().view(WatchedIds)


def _check_exact_match(answer: Any) -> None:
    from transformers import EvalPrediction

    if not callable(answer):
        raise Wrong("make_exact_match should be a function of the tokenizer that returns your compute_metrics.")
    tokenizer = metric_tokenizer()
    with learner_code("calling make_exact_match(tokenizer)"):
        compute_metrics = answer(tokenizer)
    if not callable(compute_metrics):
        raise Wrong("make_exact_match(tokenizer) should return a function: the compute_metrics the Trainer calls.")
    cases, values, calls = metric_cases(tokenizer), [], []
    for predictions, labels, _, _ in cases:
        with learner_code(
            "calling your compute_metrics",
            "The predictions hold -100 where the Trainer padded the rows to one width: no tokenizer decodes -100.",
        ):
            result = compute_metrics(EvalPrediction(predictions=_watched(predictions, calls), label_ids=labels.copy()))
        if not isinstance(result, dict) or "exact_match" not in result:
            raise Wrong(f"compute_metrics should return a dict with the key 'exact_match', got {result!r:.80}.")
        try:
            values.append(float(result["exact_match"]))
        except (TypeError, ValueError):
            raise Wrong(f"exact_match should be a number, got {result['exact_match']!r:.60}.") from None
    wrong = [(value, case[2]) for value, case in zip(values, cases, strict=True) if abs(value - case[2]) >= 1e-9]
    if not wrong:
        return
    value, expected = wrong[0]
    said = f"exact match {value:.3f}, expected {expected:.3f}"
    if calls:
        raise Wrong(
            f"{said}: the predictions are token ids already (generate's output, one id per position), not logits; "
            "argmax over them picks positions, not tokens. Compare the ids themselves."
        )
    fits = [
        name
        for name in METRIC_MISTAKES
        if all(abs(v - case[3][name]) < 1e-9 for v, case in zip(values, cases, strict=True))
    ]
    if len(fits) == 1:
        raise Wrong(f"{said}: {METRIC_MISTAKES[fits[0]]}.")
    if fits:
        raise Wrong(
            f"{said}, on each of the check's sets the score of one of these mistakes: "
            + "; or ".join(METRIC_MISTAKES[name] for name in fits)
            + "."
        )
    raise Wrong(
        f"{said}: compare the generated tokens after the prompt, up to the first EOS, with the labels that are not "
        "-100 (without their EOS), skipping the padding."
    )


# ---- exercise 3: digit_reward(completions, **kwargs) -------------------------------------------------------------


def reward_cases(seed: int = CASES_SEED) -> tuple[dict[str, Any], list[float]]:
    """The keyword arguments of one GRPOTrainer call (with a drawn extra dataset column) and the rewards expected."""
    from transformers import TrainerState

    draw = random.Random(seed)
    prompts, completions, answers, expected = [], [], [], []
    kinds = ["right", "right_spaced", "wrong_digit", "two_digits", "leading_zero", "empty", "word", "digit_then_text"]
    kinds *= 2
    draw.shuffle(kinds)
    for kind in kinds:
        values = [draw.randint(0, 9) for _ in range(draw.randint(3, 8))]
        best = max(values)
        other = (best + draw.randint(1, 9)) % 10
        completion, value = {
            "right": (str(best), 1.0),
            "right_spaced": (f" {best} \n", 1.0),
            "wrong_digit": (f" {other}", 0.2),
            "two_digits": (f" {best}{other}", 0.0),
            "leading_zero": (f" 0{best}", 0.0),  # int() reads it as the right digit
            "empty": ("", 0.0),
            "word": (" nine", 0.0),
            "digit_then_text": (f" {best} is", 0.0),
        }[kind]
        prompts.append("max " + " ".join(map(str, values)) + " =")
        completions.append(completion)
        answers.append(f" {best}")
        expected.append(value)
    kwargs = {
        "prompts": prompts,
        "completions": completions,
        "completion_ids": [[draw.randint(2, 30)] for _ in completions],
        "answer": answers,
        "source_row": list(range(len(completions))),
        "trainer_state": TrainerState(global_step=draw.randint(1, 50)),
        "log_extra": lambda *args, **kw: None,
        "log_metric": lambda *args, **kw: None,
    }
    return kwargs, expected


def rewards_as_grpo_receives(function: Any, kwargs: dict[str, Any], advice: str = "") -> Any:
    """Call a reward function the way trl 1.16's ``GRPOTrainer._calculate_rewards`` does, and return the rewards
    as it keeps them: a float32 tensor.

    What trl does (trl/trainer/grpo_trainer.py, ``_calculate_rewards``): an async function (``is_async_callable``:
    a coroutine function, or a callable whose ``__call__`` is one) is awaited on an event loop of its own thread;
    ``None`` becomes NaN (``[r if r is not None else torch.nan for r in output]``), the length must be the number
    of completions (a ``ValueError`` otherwise), and the rewards become ``torch.tensor(output, dtype=torch.float32)``,
    which refuses strings. The check raises :class:`Wrong` with a message of its own where trl would raise."""
    import asyncio
    import functools
    import inspect
    from concurrent.futures import ThreadPoolExecutor

    import torch

    unwrapped = function
    while isinstance(unwrapped, functools.partial):
        unwrapped = unwrapped.func
    is_async = inspect.iscoroutinefunction(unwrapped) or inspect.iscoroutinefunction(type(unwrapped).__call__)
    name = getattr(function, "__name__", "your reward function")
    arguments = ", ".join(f"{key}=..." for key in kwargs)
    with learner_code(f"GRPOTrainer {'awaited' if is_async else 'called'} {name}({arguments})", advice):
        if is_async:
            with ThreadPoolExecutor(max_workers=1) as loop_thread:  # trl awaits it on a loop of its own thread
                output = loop_thread.submit(asyncio.run, function(**kwargs)).result()
        else:
            output = function(**kwargs)
        if inspect.isawaitable(output):
            raise Wrong(
                f"{name} returned a coroutine that GRPOTrainer never awaits: it awaits a reward function only "
                "when the function itself is declared `async def` (or its __call__ is)."
            )
    count = len(kwargs["completions"])
    if isinstance(output, dict):
        raise Wrong(
            f"{name} returned a dict (keys {list(output)[:3]}); GRPOTrainer wants a list of {count} numbers, "
            "one reward per completion, in the order of the completions."
        )
    if isinstance(output, (str, bytes)) or not hasattr(output, "__iter__"):
        raise Wrong(f"return one reward per completion (a list of {count} numbers), got {output!r:.60}.")
    with learner_code("reading the rewards your function returned"):
        rewards = [reward if reward is not None else torch.nan for reward in output]
    if len(rewards) != count:
        raise Wrong(f"return one reward per completion: {count} completions, {len(rewards)} rewards.")
    try:
        return torch.tensor(rewards, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError) as error:
        kinds = sorted({type(reward).__name__ for reward in rewards})
        raise Wrong(
            f"GRPOTrainer turns the rewards into torch.tensor(rewards, dtype=torch.float32), which refused yours "
            f"({', '.join(kinds)}: {error}); return numbers (float), not text."
        ) from None


def _check_reward(answer: Any) -> None:
    import torch

    if not callable(answer):
        raise Wrong("digit_reward should be a function: def digit_reward(completions, **kwargs): ...")
    kwargs, expected = reward_cases()
    rewards = rewards_as_grpo_receives(
        answer,
        kwargs,
        "GRPOTrainer passes these keyword arguments to every reward function: take the ones you need by name and "
        "the rest with **kwargs. The dataset's completion column is never passed; the right digit is in 'answer'.",
    )
    wanted = torch.tensor(expected, dtype=torch.float32)
    for completion, want, got, value in zip(
        kwargs["completions"], kwargs["answer"], rewards.tolist(), wanted.tolist(), strict=True
    ):
        if math.isnan(got):
            raise Wrong(
                f"{completion!r} (answer {want!r}) got None, which GRPOTrainer turns into NaN: every completion "
                f"needs a number (expected {value:g})."
            )
        if abs(got - value) > REWARD_TOLERANCE:
            said = completion.strip()
            if value == 1.0 and completion != said:
                raise Wrong(
                    f"{completion!r} (answer {want!r}) got {got:g}: strip the spaces at either end before comparing."
                )
            if value == 0.0 and said.isdigit() and len(said) > 1 and got == 1.0:
                raise Wrong(
                    f"{completion!r} (answer {want!r}) got {got:g}, expected 0: {said!r} is {len(said)} characters, "
                    f"not a single digit; compare the text, do not parse it as a number (int({said!r}) is "
                    f"{int(said)})."
                )
            raise Wrong(
                f"{completion!r} (answer {want!r}) got {got:g}, expected {value:g}: 1.0 for the right digit, 0.2 for "
                "a wrong single digit, 0.0 for anything else (two digits, a word, nothing)."
            )


q1 = Exercise(
    answer_name="collate_completions",
    checker=_check_collator,
    hint_text="Each row's tokens are the prompt, the completion and eos_id; its labels are the same tokens with "
    "the prompt's positions set to -100. Pad every row to the longest with pad_id, attention_mask 0 and label -100 "
    "on the padding; return torch tensors.",
    solution_obj=solutions.collate_completions,
)

q2 = Exercise(
    answer_name="make_exact_match",
    checker=_check_exact_match,
    hint_text="Per row: the prompt's length is the number of -100 labels before the completion; drop the leading "
    "pad tokens and -100s of the prediction, then that many prompt tokens, then cut at the first EOS. Compare with "
    "the labels that are not -100, without their EOS.",
    solution_obj=solutions.make_exact_match,
)

q3 = Exercise(
    answer_name="digit_reward",
    checker=_check_reward,
    hint_text="GRPOTrainer passes the dataset's other columns by name: take answer and collect the rest with "
    "**kwargs. Return one float per completion: compare both texts without their surrounding spaces; a wrong answer "
    "that is a single digit (str.isdigit, length 1) gets 0.2.",
    solution_obj=solutions.digit_reward,
)

bind_exercises(globals())
