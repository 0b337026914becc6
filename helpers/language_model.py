"""A tiny causal language model, its tokenizers and two tasks, built offline in seconds (lessons 18 and 19).

No pretrained causal model or chat dataset ships with the course, so the lessons build their own, on one task: the
largest of some random digits.

* Lesson 18, prompt-completion rows (:func:`max_digit_rows`: ``"max 3 8 1 0 5 ="`` -> ``" 8"``), a tokenizer
  trained on the task's text with the ``tokenizers`` library (:func:`train_tokenizer`), and a Llama-style model
  from a config, sized by the course profile, bigger on a GPU (:func:`tiny_llama`). ``complete`` generates greedy
  completions; ``ExactMatchCurve`` is the lesson's instrument: a callback that scores greedy completions every few
  steps.
* Lesson 19, multi-turn conversations (:func:`conversation_rows`): a system turn gives the rule (``"reply with the
  largest digit"``), then 2 or 3 user turns of 2 to 5 random digits, each answered by the assistant with the largest
  of them. The user's digits cannot be predicted and the assistant's can: the loss on every token spends most of its
  gradient on noise. :func:`chat_tokenizer` trains a BPE tokenizer on the turns' text with the role tokens
  ``<|system|>``, ``<|user|>``, ``<|assistant|>`` and ``<|end|>`` (its end-of-sequence token), and no chat template:
  the lesson writes one. The model is :func:`tiny_llama` again.
"""

from __future__ import annotations

import random
import warnings
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback

# TRL 1.16's configs and trainers still use the old gradient_checkpointing names, which the pinned transformers answers
# with a FutureWarning at each use: nothing a learner can act on, so lesson 18 does not show them.
warnings.filterwarnings("ignore", message="`(is_)?gradient_checkpointing", category=FutureWarning)

if TYPE_CHECKING:
    from datasets import Dataset
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

SPECIAL_TOKENS = ("<pad>", "<eos>", "<unk>")
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>")
CHAT_SPECIAL_TOKENS = ("<pad>", "<unk>", *ROLE_TOKENS)
SYSTEM_PROMPT = "reply with the largest digit"


def lm_sizes() -> dict[str, int]:
    """Model and data sizes for the active course profile: small on a CPU, larger on a GPU."""
    from helpers.context import active_profile

    if active_profile().on_gpu:
        return {"hidden": 256, "layers": 4, "train_examples": 20000, "test_examples": 1000, "steps": 80}
    return {"hidden": 64, "layers": 2, "train_examples": 2000, "test_examples": 200, "steps": 40}


def max_digit_rows(count: int, seed: int, digits: tuple[int, int] = (3, 12)) -> list[dict[str, str]]:
    """``count`` prompt-completion rows: between ``digits[0]`` and ``digits[1]`` random digits (so the rows differ in
    length), the completion is the largest digit, after a space."""
    low, high = digits
    if count < 1 or not 1 <= low <= high:
        raise ValueError(f"need count >= 1 and 1 <= digits[0] <= digits[1], got count={count}, digits={digits}.")
    draw = random.Random(seed)
    rows = []
    for _ in range(count):
        values = [draw.randint(0, 9) for _ in range(draw.randint(low, high))]
        rows.append({"prompt": "max " + " ".join(map(str, values)) + " =", "completion": f" {max(values)}"})
    return rows


def max_digit_dataset(count: int, seed: int, digits: tuple[int, int] = (3, 12)) -> Dataset:
    """:func:`max_digit_rows` as a ``datasets.Dataset`` with the columns ``prompt`` and ``completion``."""
    from datasets import Dataset

    return Dataset.from_list(max_digit_rows(count, seed, digits))


def train_tokenizer(
    texts: Any, vocab_size: int = 64, *, special_tokens: tuple[str, ...] = SPECIAL_TOKENS, eos_token: str = "<eos>"
) -> PreTrainedTokenizerFast:
    """A BPE tokenizer trained on ``texts`` (strings, or rows with prompt and completion), one token a word or digit,
    with ``special_tokens`` (by default ``<pad>``, ``<eos>`` and ``<unk>``; they must hold ``<pad>``, ``<unk>`` and
    ``eos_token``); wrapped for transformers (right padding)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = [text if isinstance(text, str) else text["prompt"] + text["completion"] for text in texts]
    if not corpus:
        raise ValueError("train_tokenizer needs at least one text to learn its vocabulary from.")
    model = Tokenizer(models.BPE(unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.Metaspace()
    model.decoder = decoders.Metaspace()
    model.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens)))
    return PreTrainedTokenizerFast(tokenizer_object=model, pad_token="<pad>", eos_token=eos_token, unk_token="<unk>")


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
    corpus = [message["content"] for row in conversations for message in row["messages"]]
    if not corpus:
        raise ValueError("chat_tokenizer needs at least one conversation to learn its vocabulary from.")
    return train_tokenizer(corpus, vocab_size, special_tokens=CHAT_SPECIAL_TOKENS, eos_token="<|end|>")


def tiny_llama(tokenizer: Any, seed: int = 0, hidden: int | None = None, layers: int | None = None) -> LlamaForCausalLM:
    """A Llama-style causal LM with random weights from ``seed``, sized by :func:`lm_sizes` unless given."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    if hidden is None or layers is None:
        sizes = lm_sizes()
        hidden, layers = hidden or sizes["hidden"], layers or sizes["layers"]
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def complete(model: Any, tokenizer: Any, prompts: Any, max_new_tokens: int = 3) -> list[str]:
    """Greedy completions of ``prompts`` (left padded, as generation needs), the new text only."""
    import torch

    prompts = list(prompts)
    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    try:
        batch = tokenizer(prompts, return_tensors="pt", padding=True).to(model.device)
    finally:
        tokenizer.padding_side = side
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model.generate(
            **batch, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    model.train(was_training)
    return tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)


def exact_match(answers: list[str], references: list[str]) -> float:
    """The share of answers equal to their reference, spaces at either end ignored."""
    if len(answers) != len(references) or not references:
        raise ValueError(f"need as many answers as references, got {len(answers)} and {len(references)}.")
    return sum(a.strip() == r.strip() for a, r in zip(answers, references, strict=True)) / len(references)


def majority_share(completions: Any) -> float:
    """The exact match of always answering the most common completion (the baseline a model must beat)."""
    values = [c.strip() for c in completions]
    return max(values.count(v) for v in set(values)) / len(values)


class ExactMatchCurve(TrainerCallback):
    """Every ``every`` steps (and at step 0), the exact match of greedy completions on ``rows``: ``self.points``."""

    def __init__(self, tokenizer: Any, rows: Any, every: int) -> None:
        self.tokenizer, self.every, self.points = tokenizer, every, []
        self.prompts = list(rows["prompt"])
        self.references = list(rows["completion"])

    def _score(self, step: int, model: Any) -> None:
        answers = complete(model, self.tokenizer, self.prompts)
        self.points.append((step, exact_match(answers, self.references)))

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self._score(0, model)

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if state.global_step % self.every == 0:
            self._score(state.global_step, model)
