"""19 · Chat data: the pattern, as a script.

Generated from notebooks/19_chat_data.ipynb by `python -m tools.examples`; do not edit.
Run: python 19_chat_data.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
"""

from transformers import HfArgumentParser, TrainerCallback


class ShowPlan(TrainerCallback):
    """Prints the global batch and the planned optimizer steps when training starts."""

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            per_device = args.per_device_train_batch_size
            accumulation = args.gradient_accumulation_steps
            batch = per_device * accumulation * args.world_size
            print(
                f"global batch {batch} = {per_device} per device x {accumulation} "
                f"accumulation x {args.world_size} processes; "
                f"{state.max_steps} optimizer steps planned"
            )


# %% 19_chat_data.ipynb cell 4
import torch

from helpers.language_model import chat_tokenizer, conversation_dataset

on_gpu = torch.cuda.is_available()
n_train, n_test, steps = (20000, 1000, 120) if on_gpu else (1200, 200, 40)
train_set = conversation_dataset(n_train, seed=0)  # your project: load_dataset(...)
test_set = conversation_dataset(n_test, seed=1)  # your project: load_dataset(...)
tokenizer = chat_tokenizer(train_set)  # your project: AutoTokenizer.from_pretrained
for message in train_set[0]["messages"]:
    print(f"{message['role']:>9}: {message['content']}")


# %% 19_chat_data.ipynb cell 6
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "<|assistant|>{% generation %}{{ message['content'] }}<|end|>{% endgeneration %}"
    "{% else %}"
    "<|{{ message['role'] }}|>{{ message['content'] }}<|end|>"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


# %% 19_chat_data.ipynb cell 7
tokenizer.chat_template = CHAT_TEMPLATE
print(tokenizer.apply_chat_template(train_set[0]["messages"], tokenize=False))


# %% 19_chat_data.ipynb cell 9
from trl import SFTConfig, SFTTrainer

from helpers import run_dir
from helpers.language_model import tiny_llama

on_gpu = torch.cuda.is_available()
hidden, layers = (256, 4) if on_gpu else (64, 2)  # the model's width and depth
parser = HfArgumentParser(SFTConfig)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("19_pattern")),  # your project: any folder
    assistant_only_loss=True,  # labels -100 outside {% generation %}
    max_steps=steps,
    per_device_train_batch_size=64,
    learning_rate=3e-3,
    lr_scheduler_type="constant",
    logging_steps=steps // 4,
    bf16=on_gpu and torch.cuda.is_bf16_supported(),  # SFTConfig's default is True
    use_cpu=not on_gpu,
    report_to="none",
    seed=0,
)
(args,) = parser.parse_args_into_dataclasses()
trainer = SFTTrainer(
    # your project: AutoModelForCausalLM.from_pretrained
    model=tiny_llama(tokenizer, seed=0, hidden=hidden, layers=layers),
    args=args,
    train_dataset=train_set,
    processing_class=tokenizer,
)
trainer.add_callback(ShowPlan())
trainer.train()


# %% 19_chat_data.ipynb cell 14


def generate_replies(model, tokenizer, conversations, max_new_tokens=4):
    """Greedy replies to each conversation (a list of messages), the new text only."""
    batch = tokenizer.apply_chat_template(
        conversations,
        add_generation_prompt=True,
        padding=True,
        tokenizer_kwargs={"padding_side": "left"},
        return_tensors="pt",
    ).to(model.device)
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False)
    new = out[:, batch["input_ids"].shape[1] :]
    return tokenizer.batch_decode(new, skip_special_tokens=True)


# %% 19_chat_data.ipynb cell 15
def right_share(replies, wanted):
    """The share of replies equal to the wanted ones, spaces at either end ignored."""
    return sum(r.strip() == w.strip() for r, w in zip(replies, wanted)) / len(wanted)


asked = [row["messages"][:-1] for row in test_set]  # without the last reply
wanted = [row["messages"][-1]["content"] for row in test_set]
score = right_share(generate_replies(trainer.model, tokenizer, asked), wanted)
baseline = max(wanted.count(reply) for reply in set(wanted)) / len(wanted)
print(
    f"right replies: {score:.3f} of {len(asked)} (always the commonest: {baseline:.3f})"
)
