"""helpers.language_model's chat part (lesson 19's conversations and tokenizer) and lesson 19's exported code, run
on drawn cases: the template's mask against TRL's labels, the collator built from rendered prefixes against TRL's
batches, the template without markers, the spaced template that breaks the prefix rule, and batched generation."""

from __future__ import annotations

import logging

import pytest
import torch
from trl import SFTConfig, SFTTrainer

from helpers.language_model import SYSTEM_PROMPT, chat_tokenizer, conversation_dataset, conversation_rows, tiny_llama
from helpers.lessons.lesson_19 import CHAT_TEMPLATE, AssistantOnlyCollator, generate_replies

NO_MARKERS = CHAT_TEMPLATE.replace("{% generation %}", "").replace("{% endgeneration %}", "")
SPACED = CHAT_TEMPLATE.replace("<|assistant|>", "<|assistant|> ")


@pytest.fixture(scope="module")
def tokenizer():
    tokenizer = chat_tokenizer(conversation_rows(400, seed=5))
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def sft(tokenizer, data, tmp_path, **changes):
    settings = {"report_to": "none", "bf16": False, "use_cpu": True, "assistant_only_loss": True, **changes}
    model = tiny_llama(tokenizer, seed=0, hidden=32, layers=1)
    return SFTTrainer(
        model=model, args=SFTConfig(str(tmp_path), **settings), train_dataset=data, processing_class=tokenizer
    )


def test_rows_are_seeded_and_right():
    rows = conversation_rows(60, seed=7, turns=(1, 4), digits=(2, 6))
    assert rows == conversation_rows(60, seed=7, turns=(1, 4), digits=(2, 6)) != conversation_rows(60, seed=8)
    for row in rows:
        system, *turns = row["messages"]
        assert system == {"role": "system", "content": SYSTEM_PROMPT} and 2 <= len(turns) <= 8
        for user, assistant in zip(turns[::2], turns[1::2], strict=True):
            digits = [int(d) for d in user["content"].split()]
            assert user["role"] == "user" and assistant["role"] == "assistant" and 2 <= len(digits) <= 6
            assert assistant["content"] == str(max(digits))


@pytest.mark.parametrize("count, turns, digits", [(0, (2, 3), (2, 5)), (5, (0, 2), (2, 5)), (5, (2, 3), (4, 1))])
def test_bad_sizes_are_refused(count, turns, digits):
    with pytest.raises(ValueError, match="count"):
        conversation_rows(count, seed=0, turns=turns, digits=digits)


def test_tokenizer_has_the_role_tokens_and_no_template():
    plain = chat_tokenizer(conversation_rows(50, seed=1))
    assert plain.chat_template is None and plain.eos_token == "<|end|>" and plain.pad_token == "<pad>"
    assert plain.tokenize("<|assistant|>7<|end|>") == ["<|assistant|>", "▁7", "<|end|>"]
    with pytest.raises(ValueError, match="at least one conversation"):
        chat_tokenizer([])


@pytest.mark.parametrize("seed", [11, 12])
def test_the_collator_gives_trls_batches(tokenizer, tmp_path, seed):
    """Drawn conversations with 1 to 4 turns, with and without a system turn: the same ids and labels, token for
    token, as SFTTrainer's assistant_only_loss."""
    rows = conversation_rows(24, seed=seed, turns=(1, 4), digits=(1, 7))
    for row in rows[::3]:
        row["messages"] = row["messages"][1:]  # no system turn
    trainer = sft(tokenizer, conversation_dataset(1, seed=0).from_list(rows), tmp_path)
    ours = AssistantOnlyCollator(tokenizer)(rows)
    theirs = trainer.data_collator([trainer.train_dataset[i] for i in range(len(rows))])
    for key in ("input_ids", "attention_mask", "labels"):
        assert torch.equal(ours[key], theirs[key]), key


def test_without_markers_zeros_and_a_refusal(tokenizer, tmp_path):
    messages = conversation_rows(1, seed=3)[0]["messages"]
    out = tokenizer.apply_chat_template(messages, chat_template=NO_MARKERS, return_assistant_tokens_mask=True)
    assert set(out["assistant_masks"]) == {0}
    tokenizer.chat_template = NO_MARKERS
    try:
        with pytest.raises(ValueError, match="generation"):
            sft(tokenizer, conversation_dataset(8, seed=3), tmp_path)
        every = sft(tokenizer, conversation_dataset(8, seed=3), tmp_path, assistant_only_loss=False)
        assert -100 not in every.train_dataset[0]["labels"]  # the silent failure: every token labelled
    finally:
        tokenizer.chat_template = CHAT_TEMPLATE


def test_sftconfig_turns_bf16_on_unless_told():
    """The pattern's note: bf16 is on by default; without a GPU it stops unless use_cpu=True, then stays on."""
    assert SFTConfig.__dataclass_fields__["bf16"].default is None  # resolved in __post_init__: not fp16
    assert SFTConfig("x", bf16=False, use_cpu=True).bf16 is False
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="use_cpu"):
            SFTConfig("x", report_to="none")
        assert SFTConfig("x", report_to="none", use_cpu=True).bf16 is True


def test_the_spaced_template_trains_the_same_tokens_and_breaks_the_prefix_rule(tokenizer):
    """Section 7: the same training ids and mask, a generation prompt that is not a prefix of them, and the
    collator's prefix rule, which section 3 says holds only where the tokens split where the text does, fails."""
    for row in conversation_rows(20, seed=9, turns=(1, 3)):
        messages = row["messages"]
        plain = tokenizer.apply_chat_template(messages, return_assistant_tokens_mask=True)
        spaced = tokenizer.apply_chat_template(messages, chat_template=SPACED, return_assistant_tokens_mask=True)
        assert plain["input_ids"] == spaced["input_ids"] and plain["assistant_masks"] == spaced["assistant_masks"]
        prompt = tokenizer.apply_chat_template(messages[:-1], chat_template=SPACED, add_generation_prompt=True)
        assert spaced["input_ids"][: len(prompt["input_ids"])] != prompt["input_ids"]
    tokenizer.chat_template = SPACED
    try:
        rows = conversation_rows(4, seed=9)
        batch = AssistantOnlyCollator(tokenizer)(rows)
        masks = [tokenizer.apply_chat_template(r["messages"], return_assistant_tokens_mask=True) for r in rows]
        wanted = [[i if m else -100 for i, m in zip(o["input_ids"], o["assistant_masks"])] for o in masks]
        assert [row[: len(w)] for row, w in zip(batch["labels"].tolist(), wanted)] != wanted
    finally:
        tokenizer.chat_template = CHAT_TEMPLATE


def test_batched_replies_equal_replies_one_at_a_time(tokenizer):
    model = tiny_llama(tokenizer, seed=1, hidden=32, layers=1).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(4.0)  # sharp logits: greedy replies that depend on the prompt
    asked = [row["messages"][:-1] for row in conversation_rows(10, seed=4, turns=(1, 3), digits=(1, 7))]
    batched = generate_replies(model, tokenizer, asked)
    alone = [generate_replies(model, tokenizer, [conversation])[0] for conversation in asked]
    assert batched == alone and len(set(batched)) > 1 and tokenizer.padding_side == "right"


def test_trl_warns_about_the_spaced_template_on_prompt_completion_data_only(tokenizer, tmp_path, caplog):
    """Section 7's last sentence: the prompt/completion route warns that the prompt is not a prefix; the
    messages route, with the same template, says nothing about it."""
    rows = conversation_rows(6, seed=10)
    pairs = [{"prompt": r["messages"][:-1], "completion": r["messages"][-1:]} for r in rows]
    tokenizer.chat_template = SPACED
    try:
        with caplog.at_level(logging.WARNING):
            sft(tokenizer, conversation_dataset(1, seed=0).from_list(rows), tmp_path / "messages")
        assert "not a prefix" not in caplog.text
        with caplog.at_level(logging.WARNING):
            sft(
                tokenizer,
                conversation_dataset(1, seed=0).from_list(pairs),
                tmp_path / "pairs",
                assistant_only_loss=False,
            )
        assert "not a prefix of the tokenized prompt+completion" in caplog.text
    finally:
        tokenizer.chat_template = CHAT_TEMPLATE


def test_the_collator_trains_a_plain_trainer_and_pairs_train_the_last_reply_only(tokenizer, tmp_path):
    """Section 3's advice (a plain Trainer, remove_unused_columns=False) and section 5's claim (prompt/completion
    data: labels on the last reply and its <|end|> only, earlier replies masked)."""
    from transformers import Trainer, TrainingArguments

    rows = conversation_rows(16, seed=13)
    args = TrainingArguments(
        str(tmp_path / "plain"),
        max_steps=2,
        per_device_train_batch_size=4,
        remove_unused_columns=False,
        report_to="none",
        use_cpu=True,
    )
    model = tiny_llama(tokenizer, seed=0, hidden=32, layers=1)
    data = conversation_dataset(1, seed=0).from_list(rows)
    Trainer(model=model, args=args, train_dataset=data, data_collator=AssistantOnlyCollator(tokenizer)).train()
    pairs = [{"prompt": r["messages"][:-1], "completion": r["messages"][-1:]} for r in rows]
    trainer = sft(tokenizer, data.from_list(pairs), tmp_path / "pairs", assistant_only_loss=False)
    for row, prepared in zip(rows, trainer.train_dataset, strict=True):
        labelled = [t for t in prepared["labels"] if t != -100]
        assert tokenizer.convert_ids_to_tokens(labelled) == [
            *tokenizer.tokenize(row["messages"][-1]["content"]),
            "<|end|>",
        ]
