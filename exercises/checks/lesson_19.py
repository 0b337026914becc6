"""Exercises of lesson 19 (chat data): the labels of a conversation under a template without ``{% generation %}``,
judged token for token against the mask transformers and TRL compute from the same template with the markers; and
greedy replies generated through the chat template, judged against the check's own generation on a small Llama."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_19 as solutions

CASES_SEED = 1919  # the check draws its cases from this seed each time it runs, never the lesson's rows

# The check's own layout (not the lesson's): a role token, the text, and two closing tokens, the second one only
# after the assistant's turns (so that where a reply stops is more than one token away from its text).
MARKED_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "<|assistant|>{% generation %}{{ message['content'] }}<|end|><pad>{% endgeneration %}"
    "{% else %}"
    "<|{{ message['role'] }}|>{{ message['content'] }}<|end|>"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
UNMARKED_TEMPLATE = MARKED_TEMPLATE.replace("{% generation %}", "").replace("{% endgeneration %}", "")


@cache
def check_tokenizer() -> Any:
    """A chat tokenizer trained on the check's own conversations (cached: training it takes a fraction of a
    second, and each check hands out a fresh copy)."""
    from helpers.language_model import chat_tokenizer, conversation_rows

    return chat_tokenizer(conversation_rows(300, seed=CASES_SEED, digits=(1, 6)))


def fresh_tokenizer(template: str) -> Any:
    """A copy of :func:`check_tokenizer` with ``template`` as its chat template, right padding."""
    import copy

    tokenizer = copy.deepcopy(check_tokenizer())
    tokenizer.chat_template = template
    tokenizer.padding_side = "right"
    return tokenizer


def label_cases(seed: int = CASES_SEED) -> list[list[dict[str, str]]]:
    """Drawn conversations: with or without a system turn, replies of 1 to 3 digits, some ending on a user turn."""
    draw = random.Random(seed)
    cases = []
    for number in range(6):
        messages = [{"role": "system", "content": "reply with the largest digit"}] if number % 3 != 2 else []
        for _ in range(draw.randint(1, 3)):
            values = [draw.randint(0, 9) for _ in range(draw.randint(2, 6))]
            reply = " ".join(str(draw.randint(0, 9)) for _ in range(draw.randint(1, 3)))
            messages += [
                {"role": "user", "content": " ".join(map(str, values))},
                {"role": "assistant", "content": reply},
            ]
        if number == 4:
            messages.append({"role": "user", "content": "3 1"})
        cases.append(messages)
    return cases


def expected_labels(messages: list[dict[str, str]]) -> tuple[list[int], list[int], list[str]]:
    """input_ids, labels from transformers' assistant mask (the mask TRL uses) and each token's role."""
    tokenizer = fresh_tokenizer(MARKED_TEMPLATE)
    out = tokenizer.apply_chat_template(messages, return_assistant_tokens_mask=True)
    ids, mask = out["input_ids"], out["assistant_masks"]
    roles, role = [], "?"
    for token in tokenizer.convert_ids_to_tokens(ids):
        if token in ("<|system|>", "<|user|>", "<|assistant|>"):
            role = token.strip("<|>")
        roles.append(role)
    return ids, [i if bit else -100 for i, bit in zip(ids, mask, strict=True)], roles


def _as_ints(value: Any, name: str) -> list[int]:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]  # a batch of one
    if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
        raise Wrong(f"{name} should be a list of ints (or a 1-D tensor), got {value!r:.80}.")
    return value


def _check_labels(answer: Any) -> None:
    if not callable(answer):
        raise Wrong("chat_labels should be a function: def chat_labels(tokenizer, messages): ...")
    for messages in label_cases():
        ids, wanted, roles = expected_labels(messages)
        tokenizer = fresh_tokenizer(UNMARKED_TEMPLATE)
        with learner_code("calling chat_labels(tokenizer, messages)"):
            result = answer(tokenizer, [dict(m) for m in messages])
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise Wrong(f"return two lists, (input_ids, labels); got {result!r:.80}.")
        got_ids, got = _as_ints(result[0], "input_ids"), _as_ints(result[1], "labels")
        if got_ids != ids:
            raise Wrong(
                "input_ids should be the whole conversation rendered by the tokenizer's chat template "
                "(tokenizer.apply_chat_template(messages)), without a generation prompt."
            )
        if len(got) != len(ids):
            raise Wrong(f"labels should have one entry per token: {len(ids)} tokens, {len(got)} labels.")
        if got == wanted:
            continue
        _explain_labels(got, ids, wanted, roles, fresh_tokenizer(UNMARKED_TEMPLATE))


def _explain_labels(got: list[int], ids: list[int], wanted: list[int], roles: list[str], tokenizer: Any) -> None:
    """Raise the Wrong that names what these labels did."""
    labelled = [label != -100 for label in got]
    if not any(labelled):
        raise Wrong(
            "no token has a label. This template has no {% generation %} markers, so return_assistant_tokens_mask "
            "gives zeros; find each reply by rendering the conversation up to it instead."
        )
    if all(labelled):
        raise Wrong("every token has a label: the loss would train the system and user turns too.")
    if any(label not in (-100, token) for label, token in zip(got, ids, strict=True)):
        if got[:-1] == wanted[1:] or got[1:] == wanted[:-1]:
            raise Wrong(
                "your labels are shifted by one token. Do not shift them: the model shifts labels against its "
                "logits itself, so labels[i] is input_ids[i] on the tokens to learn."
            )
        raise Wrong("where a token has a label, the label should be that token's own id (labels[i] == input_ids[i]).")
    for role in ("system", "user"):
        if any(bit and r == role for bit, r in zip(labelled, roles, strict=True)):
            raise Wrong(f"tokens of the {role} turn have labels: only the assistant's turns belong in the loss.")
    names = tokenizer.convert_ids_to_tokens(ids)
    extra = [names[i] for i, (g, w) in enumerate(zip(got, wanted, strict=True)) if g != -100 and w == -100]
    missing = [names[i] for i, (g, w) in enumerate(zip(got, wanted, strict=True)) if g == -100 and w != -100]
    if "<|assistant|>" in extra:
        raise Wrong(
            "the <|assistant|> role token has a label: the template writes it (it is the generation prompt), the "
            "model does not; start each reply's labels after it."
        )
    if missing and set(missing) <= {"<|end|>", "<pad>"}:
        raise Wrong(
            f"the tokens that close a reply ({' '.join(dict.fromkeys(missing))}) have no label: the model would "
            "never learn to stop. Label everything up to where the next turn starts."
        )
    raise Wrong(
        f"labels differ from the assistant's tokens: labelled but not the assistant's: {extra[:6]}; the "
        f"assistant's but not labelled: {missing[:6]}."
    )


# ---- exercise 2: reply_texts(model, tokenizer, conversations) ----------------------------------------------------

MAX_NEW_TOKENS = 5


def reply_cases(seed: int = CASES_SEED) -> list[list[dict[str, str]]]:
    """Drawn conversations of different lengths, each ending with a user turn."""
    from helpers.language_model import conversation_rows

    rows = conversation_rows(8, seed=seed + 1, turns=(1, 3), digits=(1, 6))
    return [row["messages"][:-1] for row in rows]


@cache
def reply_model() -> Any:
    """A small Llama with random weights, made sharp enough that its greedy replies depend on the prompt."""
    import torch

    from helpers.language_model import tiny_llama

    with torch.random.fork_rng():
        model = tiny_llama(check_tokenizer(), seed=CASES_SEED, hidden=32, layers=1)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.mul_(4.0)
    return model.eval()


def generated(
    conversations: Any, generation_prompt: bool = True, side: str = "left", new_only: bool = True
) -> list[str]:
    """The check's own replies, and the same with one thing done otherwise (for the messages)."""
    import torch

    model, tokenizer = reply_model(), fresh_tokenizer(MARKED_TEMPLATE)
    tokenizer.padding_side = side
    batch = tokenizer.apply_chat_template(
        conversations, add_generation_prompt=generation_prompt, padding=True, return_tensors="pt"
    )
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=MAX_NEW_TOKENS, do_sample=False)
    if new_only:
        out = out[:, batch["input_ids"].shape[1] :]
    return tokenizer.batch_decode(out, skip_special_tokens=True)


def _check_replies(answer: Any) -> None:
    import torch

    if not callable(answer):
        raise Wrong("reply_texts should be a function: def reply_texts(model, tokenizer, conversations): ...")
    conversations = reply_cases()
    tokenizer = fresh_tokenizer(MARKED_TEMPLATE)
    model = reply_model()
    with torch.random.fork_rng(), learner_code("calling reply_texts(model, tokenizer, conversations)"):
        replies = answer(model, tokenizer, [list(c) for c in conversations])
    if isinstance(replies, str) or not isinstance(replies, list | tuple):
        raise Wrong(f"return a list of strings, one reply per conversation; got {replies!r:.80}.")
    if len(replies) != len(conversations):
        raise Wrong(f"return one reply per conversation: {len(conversations)} conversations, {len(replies)} replies.")
    if not all(isinstance(r, str) for r in replies):
        raise Wrong("each reply should be a string: decode the new token ids with tokenizer.batch_decode.")
    right = generated(conversations)
    if [r.strip() for r in replies] == [r.strip() for r in right]:
        return
    if [r.strip() for r in replies] == [r.strip() for r in generated(conversations, generation_prompt=False)]:
        raise Wrong(
            "your replies continue the user's turn: render the conversations with add_generation_prompt=True, so "
            "that the prompt ends on <|assistant|> and the model's next token starts its reply."
        )
    if [r.strip() for r in replies] == [r.strip() for r in generated(conversations, side="right")]:
        raise Wrong(
            "the shorter conversations were padded on the right, so the model generated after the padding: pad on "
            "the left for generation (tokenizer.padding_side = 'left', or padding_side='left')."
        )
    prompts = [
        tokenizer.decode(tokenizer.apply_chat_template(c)["input_ids"], skip_special_tokens=True) for c in conversations
    ]
    if all(r.strip().startswith(p.strip()[:8]) for r, p in zip(replies, prompts, strict=True) if p.strip()):
        raise Wrong("your replies begin with the conversation: decode only the tokens after the prompt's length.")
    for reply, want, conversation in zip(replies, right, conversations, strict=True):
        if reply.strip() != want.strip():
            raise Wrong(
                f"for the conversation ending {conversation[-1]['content']!r} you replied {reply!r}, greedy "
                f"generation of at most {MAX_NEW_TOKENS} new tokens gives {want!r} (do_sample=False, special "
                "tokens skipped)."
            )


q1 = Exercise(
    answer_name="chat_labels",
    checker=_check_labels,
    hint_text="Render the whole conversation for input_ids. For each assistant turn, the conversation before it, "
    "rendered with add_generation_prompt=True, ends where its reply starts; the conversation up to and including "
    "it ends where the next turn starts. Copy input_ids between the two, -100 elsewhere. The model shifts labels "
    "itself.",
    solution_obj=solutions.chat_labels,
)

q2 = Exercise(
    answer_name="reply_texts",
    checker=_check_replies,
    hint_text="Render the conversations with add_generation_prompt=True, padded on the left, as tensors; call "
    "model.generate with max_new_tokens=5 and do_sample=False; keep the ids after the prompt's width and decode "
    "them with skip_special_tokens=True.",
    solution_obj=solutions.reply_texts,
)

bind_exercises(globals())
