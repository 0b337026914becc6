"""Lesson 18's rules, tried where a learner uses them: another task's token boundary, the cache on and off with and
without an ``attention_mask`` beside ``position_ids``, and a task the tiny model can learn against one it cannot."""

from __future__ import annotations

import logging
import random
from typing import Any

import numpy as np
import pytest
import torch
from datasets import Dataset

from helpers.language_model import exact_match, max_digit_dataset, tiny_llama, train_tokenizer
from helpers.lessons.lesson_18 import CompletionOnlyCollator


def addition_rows(count: int, seed: int, space: bool) -> list[dict[str, str]]:
    """``"6+9="`` -> ``"15"`` (``space``: ``"add 6 9 ="`` -> ``" 15"``): two numbers of 1 or 2 digits."""
    draw = random.Random(seed)
    rows = []
    for _ in range(count):
        a, b = draw.randint(0, 99), draw.randint(0, 99)
        if space:
            rows.append({"prompt": f"add {a} {b} =", "completion": f" {a + b}"})
        else:
            rows.append({"prompt": f"{a}+{b}=", "completion": f"{a + b}"})
    return rows


def reversal_rows(count: int, seed: int) -> list[dict[str, str]]:
    """``"rev b x k ="`` -> ``" k x b"``: three letters, reversed."""
    draw = random.Random(seed)
    rows = []
    for _ in range(count):
        letters = [draw.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3)]
        rows.append({"prompt": "rev " + " ".join(letters) + " =", "completion": " " + " ".join(letters[::-1])})
    return rows


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _both_collators(rows: list[dict[str, str]], tmp_path: Any) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The lesson's collator and SFTTrainer's on the same 4 rows; what TRL warned."""
    from trl import SFTConfig, SFTTrainer

    tokenizer = train_tokenizer(rows)
    data = Dataset.from_list(rows)
    heard = _Warnings()
    logger = logging.getLogger("trl.trainer.sft_trainer")
    logger.addHandler(heard)
    try:
        sft = SFTTrainer(
            model=tiny_llama(tokenizer, seed=0, hidden=32, layers=1),
            args=SFTConfig(output_dir=str(tmp_path), report_to="none", bf16=False, use_cpu=True),
            train_dataset=data,
            processing_class=tokenizer,
        )
    finally:
        logger.removeHandler(heard)
    ours = CompletionOnlyCollator(tokenizer)(rows[:4])
    theirs = sft.data_collator([sft.train_dataset[i] for i in range(4)])
    return ours, theirs, heard.messages


@pytest.mark.rule(
    lesson="18",
    section="1. The prompt masked: your collator and `SFTTrainer`'s",
    text="give the same labels when the prompt ends on a token boundary",
    covers=["the lesson's task (completion after a space)", "addition with a space", "'6+9=' -> '15', no space"],
)
def test_sft_trainer_labels_are_yours_only_on_a_token_boundary(tmp_path: Any) -> None:
    cases = {
        "max digit": (list(max_digit_dataset(40, seed=0)), True),
        "addition, space": (addition_rows(40, seed=0, space=True), True),
        "addition, no space": (addition_rows(40, seed=0, space=False), False),
    }
    for name, (rows, same) in cases.items():
        ours, theirs, warned = _both_collators(rows, tmp_path / name.replace(" ", "_").replace(",", ""))
        equal = all(
            ours[key].shape == theirs[key].shape and torch.equal(ours[key], theirs[key])
            for key in ("input_ids", "labels")
        )
        assert equal == same, name
        assert any("not a prefix" in message for message in warned) == (not same), (name, warned)


def _packed_inputs() -> tuple[Any, dict[str, torch.Tensor], list[list[int]]]:
    from transformers import DataCollatorWithFlattening

    rows = list(max_digit_dataset(32, seed=0))
    tokenizer = train_tokenizer(rows)
    eos = [tokenizer.eos_token_id]
    ids = [{"input_ids": tokenizer(r["prompt"] + r["completion"])["input_ids"] + eos} for r in rows]
    return tokenizer, DataCollatorWithFlattening()(ids), [r["input_ids"] for r in ids]


def _gap(model: Any, flat: dict[str, torch.Tensor], rows: list[list[int]], mask: bool) -> float:
    inputs = {key: flat[key] for key in ("input_ids", "position_ids")}
    if mask:
        inputs["attention_mask"] = torch.ones_like(flat["input_ids"])
    with torch.no_grad():
        packed = model(**inputs).logits[0]
        alone = torch.cat([model(input_ids=torch.tensor([row])).logits[0] for row in rows])
    return (packed - alone).abs().max().item()


@pytest.mark.rule(
    lesson="18",
    section="2. Packing and padding-free batches",
    text="A packed batch you run yourself needs `use_cache=False` and no `attention_mask`; the same with `eager` "
    "attention",
    covers=["cache off, no attention_mask", "cache off, all-ones attention_mask", "cache on", "sdpa and eager"],
)
@pytest.mark.rule(
    lesson="18",
    section="2. Packing and padding-free batches",
    text="An all-ones `attention_mask` passed beside `position_ids` lets them attend to each other too",
    covers=["cache off, no attention_mask", "cache off, all-ones attention_mask", "cache on", "sdpa and eager"],
)
@pytest.mark.rule(
    lesson="18",
    section="Recap",
    text="packed row stay apart through `position_ids` only with the cache off",
    covers=["cache off, no attention_mask", "cache off, all-ones attention_mask", "cache on", "sdpa and eager"],
)
def test_packed_rows_stay_apart_only_with_the_cache_off_and_no_attention_mask() -> None:
    tokenizer, flat, rows = _packed_inputs()
    for attention in ("sdpa", "eager"):
        model = tiny_llama(tokenizer, seed=0, hidden=64, layers=2)
        model.set_attn_implementation(attention)
        model.config.use_cache = False
        assert _gap(model, flat, rows, mask=False) < 1e-5, attention
        assert _gap(model, flat, rows, mask=True) > 1e-2, attention
        model.config.use_cache = True
        assert _gap(model, flat, rows, mask=False) > 1e-2, attention


def _exact_match_after(rows: list[dict[str, str]], test: list[dict[str, str]], mask: bool, seed: int) -> float:
    """The lesson's pattern (40 steps, batch 32, lr 3e-3, constant) on ``rows``; greedy exact match on ``test``."""
    from transformers import Trainer, TrainingArguments

    tokenizer = train_tokenizer(rows + test)
    model = tiny_llama(tokenizer, seed=seed, hidden=64, layers=2)
    args = TrainingArguments(
        output_dir="unused",
        max_steps=40,
        per_device_train_batch_size=32,
        learning_rate=3e-3,
        lr_scheduler_type="constant",
        remove_unused_columns=False,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        seed=seed,
    )
    Trainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        data_collator=CompletionOnlyCollator(tokenizer, mask),
    ).train()
    tokenizer.padding_side = "left"
    batch = tokenizer([r["prompt"] for r in test], return_tensors="pt", padding=True)
    model.eval()
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=6, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    said = tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    return exact_match(said, [r["completion"] for r in test])


@pytest.mark.rule(
    lesson="18",
    section="Recap",
    text="At equal steps the mask spends every gradient on the completion; the prompt in the loss slows it down, on "
    "a task the model can learn",
    covers=["reversal of 3 letters, 3 seeds", "2-digit addition, 3 seeds (not learnt)", "masked and unmasked"],
)
@pytest.mark.rule(
    lesson="18",
    section="1. The prompt masked: your collator and `SFTTrainer`'s",
    text="The mask decides what the steps are spent on, on a task the model can learn",
    covers=["reversal of 3 letters, 3 seeds", "2-digit addition, 3 seeds", "masked and unmasked"],
)
def test_the_mask_helps_on_a_learnable_task_and_the_tiny_model_cannot_add(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    scores = {}
    for task, make in (("reversal", reversal_rows), ("addition", lambda n, s: addition_rows(n, s, space=True))):
        train, test = make(2000, 0), make(200, 1)
        for mask in (True, False):
            scores[task, mask] = [_exact_match_after(train, test, mask, seed) for seed in (0, 1, 2)]
    print(scores)
    assert min(scores["reversal", True]) > max(scores["reversal", False]) + 0.05, scores
    assert max(scores["addition", True] + scores["addition", False]) < 0.15, scores


def _two_grpo_steps(
    model: Any, reward: Any, rows: list[dict[str, Any]], tokenizer: Any, folder: Any, **settings: Any
) -> None:
    """Two steps of ``GRPOTrainer`` on ``model``: batch 8, groups of 4 completions of 3 tokens (``settings``
    change them), on the CPU in fp32, nothing saved."""
    from trl import GRPOConfig, GRPOTrainer

    defaults = dict(max_steps=2, per_device_train_batch_size=8, num_generations=4, max_completion_length=3)
    defaults |= dict(report_to="none", bf16=False, use_cpu=True, disable_tqdm=True, save_strategy="no")
    config = GRPOConfig(output_dir=str(folder), **(defaults | settings))
    data = Dataset.from_list(rows)
    GRPOTrainer(model=model, reward_funcs=reward, args=config, train_dataset=data, processing_class=tokenizer).train()


@pytest.mark.rule(
    lesson="18",
    section="Recap",
    text="A GRPO reward function takes `completions` and `**kwargs`",
    covers=["an extra dataset column", "a column named completion", "2 steps on the tiny Llama"],
)
def test_a_grpo_reward_function_receives_the_other_columns_but_not_completion(tmp_path: Any) -> None:
    rows = [{**row, "answer": row["completion"], "source": "drawn"} for row in max_digit_dataset(16, seed=0)]
    tokenizer = train_tokenizer(rows)
    received: list[list[str]] = []

    def reward(completions: list[str], **kwargs: Any) -> list[float]:
        received.append(sorted(kwargs))
        return [float(said.strip() == want.strip()) for said, want in zip(completions, kwargs["answer"])]

    _two_grpo_steps(tiny_llama(tokenizer, seed=0, hidden=32, layers=1), reward, rows, tokenizer, tmp_path)
    assert received and all(kwargs == received[0] for kwargs in received)
    assert {"prompts", "completion_ids", "trainer_state", "answer", "source"} <= set(received[0]), received[0]
    assert "completion" not in received[0], received[0]


def _generation_setup(tmp_path: Any, batch: int, trainer_class: Any, **settings: Any) -> tuple[Any, Any, Any, Any]:
    """A tiny Llama, its tokenizer, 37 rows of prompts of 3 to 12 digits (so the last eval batch is short and the
    prompts differ in length) and a ``trainer_class`` evaluating them in batches of ``batch``."""
    from helpers.language_model import max_digit_rows

    rows = max_digit_dataset(37, seed=9)
    tokenizer = train_tokenizer(max_digit_rows(500, seed=3))
    model = tiny_llama(tokenizer, seed=2, hidden=32, layers=1)
    from transformers import TrainingArguments

    args = settings.pop("arguments_class", TrainingArguments)(
        str(tmp_path),
        per_device_eval_batch_size=batch,
        report_to="none",
        remove_unused_columns=False,
        use_cpu=True,
        **settings,
    )
    run = trainer_class(
        model=model, args=args, data_collator=CompletionOnlyCollator(tokenizer), processing_class=tokenizer
    )
    return run, model, tokenizer, rows


@pytest.mark.rule(
    lesson="18",
    section="3. Evaluation by generation",
    text="The labels tell where each prompt ends (the first label that is not `-100`)",
    covers=["eval batches of 1, 5 and 8 over 37 rows, prompts of 3 to 12 digits (right-padded training batches): "
            "every generated answer equals greedy generation of its prompt alone"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="18",
    section="3. Evaluation by generation",
    text="`compute_metrics` gets the generated ids of every batch, padded to one width with `-100`, and the labels.",
    covers=["eval batches of 1, 5 and 8 over 37 rows (a short last batch): one array of 37 rows, -100 only at "
            "row ends, the labels beside them",
            "batches whose generation stops early (3, then 1 new token, as at an EOS): the short ones padded with "
            "-100 to width 3 (test_generated_ids_of_short_batches_are_padded_with_minus_100)"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="18",
    section="Recap",
    text="Evaluation by generation: override `prediction_step` to return generated ids, score them in "
    "`compute_metrics`",
    covers=[
        "the lesson's GenerationTrainer with an exact-match compute_metrics, through evaluate()",
        "eval batches of 1, 5 and 8 over 37 rows (a short last batch), prompts of 3 to 12 digits (left padding "
        "that differs per batch)",
        "the answers compute_metrics decodes equal greedy generation of each prompt alone",
    ],
)
@pytest.mark.parametrize("batch", [1, 5, 8])
def test_evaluation_by_generation_scores_what_generate_says(tmp_path: Any, batch: int) -> None:
    from helpers.language_model import complete
    from helpers.lessons.lesson_18 import GenerationTrainer

    run, model, tokenizer, rows = _generation_setup(tmp_path, batch, GenerationTrainer)
    decoded: list[str] = []

    def compute_metrics(prediction: Any) -> dict[str, float]:
        predictions = np.asarray(prediction.predictions)
        assert predictions.ndim == 2 and len(predictions) == len(prediction.label_ids) == len(rows)
        assert set(np.unique(predictions[predictions < 0])) <= {-100}
        padded = predictions == -100  # -100 only after a row's last generated id
        assert (padded[:, :-1] <= padded[:, 1:]).all()
        ids = torch.tensor(predictions).clamp(min=0)
        decoded.extend(tokenizer.batch_decode(ids, skip_special_tokens=True))
        return {"exact_match": exact_match(decoded, rows["completion"])}

    run.compute_metrics = compute_metrics
    metrics = run.evaluate(rows)
    alone = [complete(model, tokenizer, [prompt])[0] for prompt in rows["prompt"]]
    assert decoded == alone
    assert metrics["eval_exact_match"] == exact_match(alone, rows["completion"]) and "eval_loss" in metrics


@pytest.mark.rule(
    lesson="18",
    section="Recap",
    text="`Seq2SeqTrainer`'s `predict_with_generate` does not cut the prompt for a decoder-only model.",
    covers=[
        "a tiny Llama, eval batches of 1 and 8 over 37 rows: every predicted row begins with the whole input "
        "(prompt, completion and EOS)",
    ],
)
@pytest.mark.parametrize("batch", [1, 8])
def test_seq2seq_trainer_echoes_the_whole_input(tmp_path: Any, batch: int) -> None:
    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments

    run, _, tokenizer, rows = _generation_setup(
        tmp_path, batch, Seq2SeqTrainer, arguments_class=Seq2SeqTrainingArguments, predict_with_generate=True
    )
    output = run.predict(rows, max_new_tokens=3)
    inputs = CompletionOnlyCollator(tokenizer)([rows[i] for i in range(len(rows))])
    predictions = torch.tensor(output.predictions)
    echoed = 0
    for row, mask, predicted in zip(inputs["input_ids"], inputs["attention_mask"], predictions, strict=True):
        length = int(mask.sum())
        echoed += int(torch.equal(predicted[:length], row[:length]))
    assert echoed == len(rows)


def _bos_tokenizer(rows: list[dict[str, str]]) -> Any:
    """The course's BPE tokenizer, made to add a BOS token to every call, as Llama's tokenizer does."""
    from tokenizers import processors

    tokenizer = train_tokenizer(rows, special_tokens=("<pad>", "<eos>", "<unk>", "<bos>"))
    bos = tokenizer.convert_tokens_to_ids("<bos>")
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", bos)]
    )
    tokenizer.bos_token = "<bos>"
    return tokenizer


def _masked_labels_are_the_completion(tokenizer: Any, rows: list[dict[str, str]]) -> bool:
    """The lesson's collator on ``rows``: -100 over prompt and padding, and exactly the completion's own tokens and
    EOS labelled (nothing the tokenizer adds around a call)."""
    batch = CompletionOnlyCollator(tokenizer)(rows)
    for row, labels, ids in zip(rows, batch["labels"].tolist(), batch["input_ids"].tolist()):
        completion = tokenizer(row["completion"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        kept = [label for label in labels if label != -100]
        start = labels.index(kept[0])
        if (
            kept != completion
            or ids[start : start + len(kept)] != kept
            or labels[start + len(kept) :].count(-100) != (len(labels) - start - len(kept))
        ):
            return False
        if any(label != -100 for label in labels[:start]):
            return False
    return True


@pytest.mark.rule(
    lesson="18",
    section="The pattern",
    text="`remove_unused_columns=False`, since the collator reads the text columns the model does not take.",
    covers=["remove_unused_columns left at True: the Trainer drops prompt and completion, the collator fails",
            "remove_unused_columns=False: 2 updates at accumulation 2, batches of 1, 5 and 8"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="18",
    section="Recap",
    text="Train a causal LM on prompt-completion pairs with labels `-100` over the prompt and the padding: your own "
    "collator (with `remove_unused_columns=False`)",
    covers=[
        "the lesson's task, prompts of 3 to 12 digits: batches of 1, 5 and 8 (uneven lengths, right padding)",
        "addition with a space before the completion",
        "remove_unused_columns left at True: the Trainer drops prompt and completion, the collator gets neither",
        "remove_unused_columns=False: 2 updates at accumulation 2 on the tiny Llama",
        "a tokenizer that adds a BOS token to every call (as Llama's): one BOS, at the prompt's start, none before "
        "the completion",
    ],
)
@pytest.mark.parametrize("batch", [1, 5, 8])
def test_the_collator_labels_the_completion_only(tmp_path: Any, batch: int) -> None:
    from transformers import Trainer, TrainingArguments

    rows = list(max_digit_dataset(8, seed=1))
    tokenizer = train_tokenizer(rows)
    for chunk in (rows[index : index + batch] for index in range(0, len(rows), batch)):
        assert _masked_labels_are_the_completion(tokenizer, chunk)
    added = addition_rows(8, seed=1, space=True)
    assert _masked_labels_are_the_completion(train_tokenizer(added), added[:batch])
    assert _masked_labels_are_the_completion(_bos_tokenizer(rows), rows[:batch])
    settings = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=2,
        max_steps=2,
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        save_strategy="no",
    )
    data = Dataset.from_list(rows)
    dropped = Trainer(
        model=tiny_llama(tokenizer, seed=0, hidden=32, layers=1),
        args=TrainingArguments(**settings),
        train_dataset=data,
        data_collator=CompletionOnlyCollator(tokenizer),
    )
    with pytest.raises((KeyError, ValueError)):
        dropped.train()
    kept = Trainer(
        model=tiny_llama(tokenizer, seed=0, hidden=32, layers=1),
        args=TrainingArguments(**settings, remove_unused_columns=False),
        train_dataset=data,
        data_collator=CompletionOnlyCollator(tokenizer),
    )
    kept.train()
    assert kept.state.global_step == 2


@pytest.mark.rule(
    lesson="18",
    section="2. Packing and padding-free batches",
    text="with `position_ids` that restart at 0 for each sequence and the label of each sequence's first token set to "
    "-100.",
    covers=["batches of 1, 5 and 8 rows of uneven length (the last batch short)",
            "the lesson's BPE tokenizer and the course's MiniLM tokenizer (WordPiece, [CLS] and [SEP])"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="18",
    section="Recap",
    text="Packing (`DataCollatorWithFlattening`, `SFTConfig(packing=True)`) removes the padding",
    covers=[
        "DataCollatorWithFlattening on batches of 1, 5 and 8 rows of uneven length (the last batch short): no pad "
        "token, exactly the rows' tokens, against rows × longest when padded",
        "the same with the course's MiniLM tokenizer (WordPiece, [CLS] and [SEP] in every row)",
        "SFTConfig(packing=True), batches of 1, 5 and 8 (bfd rows of max_length 64): no pad token in any batch "
        "of an epoch, every completion token kept",
    ],
)
@pytest.mark.parametrize("batch", [1, 5, 8])
def test_packing_removes_the_padding(tmp_path: Any, batch: int) -> None:
    from transformers import DataCollatorWithFlattening
    from trl import SFTConfig, SFTTrainer

    from helpers.models import load_tokenizer

    rows = list(max_digit_dataset(21, seed=2))
    texts = [row["prompt"] + row["completion"] for row in rows]
    for tokenizer in (train_tokenizer(rows), load_tokenizer()):
        ids = [tokenizer(text)["input_ids"] for text in texts]
        for start in range(0, len(ids), batch):
            chunk = [{"input_ids": row} for row in ids[start : start + batch]]
            flattened = DataCollatorWithFlattening()(chunk)
            packed = flattened["input_ids"]
            positions = [at for row in chunk for at in range(len(row["input_ids"]))]
            assert flattened["position_ids"][0].tolist() == positions  # restarting at 0 for each sequence
            tokens = packed[0].tolist()
            first_masked = [-100 if at == 0 else token for token, at in zip(tokens, positions, strict=True)]
            assert flattened["labels"][0].tolist() == first_masked  # each sequence's first label -100
            assert packed.shape == (1, sum(len(row["input_ids"]) for row in chunk))
            assert packed[0].tolist() == [token for row in chunk for token in row["input_ids"]]
            padded = tokenizer.pad(chunk, return_tensors="pt")["input_ids"]
            assert padded.numel() == len(chunk) * max(len(row["input_ids"]) for row in chunk)
    tokenizer = train_tokenizer(rows)
    sft = SFTTrainer(
        model=tiny_llama(tokenizer, seed=0, hidden=32, layers=1),
        args=SFTConfig(
            output_dir=str(tmp_path),
            report_to="none",
            bf16=False,
            use_cpu=True,
            packing=True,
            max_length=64,
            per_device_train_batch_size=batch,
        ),
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    batches = list(sft.get_train_dataloader())
    assert batches and all((b["input_ids"] != tokenizer.pad_token_id).all() for b in batches)
    labelled = sum(int((b["labels"] != -100).sum()) for b in batches)
    completions = sum(len(tokenizer(row["completion"])["input_ids"]) + 1 for row in rows)  # + EOS
    assert labelled >= completions


@pytest.mark.rule(
    lesson="18",
    section="2. Packing and padding-free batches",
    text="The `Trainer` sets `model.config.use_cache` from `TrainingArguments.use_cache`, which is `False` by "
    "default, so training is right.",
    covers=["a model built with use_cache=True: Trainer with the default arguments, then 1 step on packed rows",
            "TrainingArguments(use_cache=True): the cache stays on and packed rows leak",
            "SFTTrainer with SFTConfig's default"],
)  # fmt: skip
def test_the_trainer_turns_the_cache_off_so_packed_rows_stay_apart(tmp_path: Any) -> None:
    from transformers import Trainer, TrainingArguments
    from trl import SFTConfig, SFTTrainer

    tokenizer, flat, rows = _packed_inputs()
    base = dict(output_dir=str(tmp_path), report_to="none", use_cpu=True, disable_tqdm=True, save_strategy="no")
    for cache in (None, True):
        model = tiny_llama(tokenizer, seed=0, hidden=64, layers=2)
        model.config.use_cache = True  # the model's own default
        settings = base if cache is None else base | dict(use_cache=cache)
        batch = {key: flat[key] for key in ("input_ids", "position_ids", "labels")}
        run = Trainer(model=model, args=TrainingArguments(**settings, max_steps=1), train_dataset=[batch] * 1,
                      data_collator=lambda features: features[0])  # fmt: skip
        run.train()
        model.eval()
        assert model.config.use_cache is bool(cache), cache
        assert (_gap(model, flat, rows, mask=False) < 1e-5) is (cache is None), cache
    model = tiny_llama(tokenizer, seed=0, hidden=64, layers=2)
    model.config.use_cache = True
    SFTTrainer(
        model=model,
        args=SFTConfig(**base, bf16=False),
        train_dataset=Dataset.from_list(list(max_digit_dataset(8, seed=0))),
        processing_class=tokenizer,
    )
    assert model.config.use_cache is False


def test_generated_ids_of_short_batches_are_padded_with_minus_100(tmp_path: Any) -> None:
    """Section 3's "padded to one width with `-100`": batches that generate 3 and 1 new tokens by turns."""
    from helpers.lessons.lesson_18 import GenerationTrainer

    class StopsEarly(GenerationTrainer):
        calls = 0

        def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):  # noqa: ANN001, ANN201
            self.max_new_tokens = 3 if self.calls % 2 == 0 else 1
            self.calls += 1
            return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)

    run, _, _, rows = _generation_setup(tmp_path, 5, StopsEarly)
    seen: list[np.ndarray] = []
    run.compute_metrics = lambda prediction: seen.append(np.asarray(prediction.predictions)) or {}
    run.evaluate(rows)
    predictions = seen[0]
    assert predictions.shape == (37, 3)
    for start in range(0, 37, 5):
        short = (start // 5) % 2 == 1
        block = predictions[start : start + 5]
        assert (block[:, 1:] == -100).all() if short else (block >= 0).all(), (start, block)


@pytest.mark.rule(
    lesson="18",
    section="4. A reward function for `GRPOTrainer`",
    text="a group whose completions all score the same teaches nothing.",
    covers=["GRPOTrainer's defaults, 2 steps on the tiny Llama, groups of 4 and of 2 completions",
            "a reward of 1 for every completion: the weights do not move",
            "a reward that differs within a group (the completion's length): they do"],
)  # fmt: skip
@pytest.mark.parametrize("generations", [4, 2])
def test_a_group_of_equal_rewards_teaches_grpo_nothing(tmp_path: Any, generations: int) -> None:
    rows = list(max_digit_dataset(16, seed=0))
    tokenizer = train_tokenizer(rows)
    moved = {}
    for name, reward in (
        ("equal", lambda completions, **kwargs: [1.0] * len(completions)),
        ("differs", lambda completions, **kwargs: [float(len(said)) for said in completions]),
    ):
        model = tiny_llama(tokenizer, seed=0, hidden=32, layers=1)
        before = [parameter.detach().clone() for parameter in model.parameters()]
        settings = dict(num_generations=generations, learning_rate=1e-2)
        _two_grpo_steps(model, reward, rows, tokenizer, tmp_path / name, **settings)
        moved[name] = max((p.detach() - b).abs().max().item() for p, b in zip(model.parameters(), before, strict=True))
    assert moved["equal"] == 0.0 and moved["differs"] > 1e-4, moved
