"""18 · Language models in the Trainer: the pattern, as a script.

Generated from notebooks/18_language_models.ipynb by `python -m tools.examples`; do not edit.
Run: python 18_language_models.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 18_language_models.ipynb cell 4
import torch

from helpers.language_model import max_digit_dataset, tiny_llama, train_tokenizer

on_gpu = torch.cuda.is_available()
n_train, n_test, steps = (20000, 1000, 80) if on_gpu else (2000, 200, 40)
hidden, layers = (256, 4) if on_gpu else (64, 2)
train_set = max_digit_dataset(n_train, seed=0)  # your project: load_dataset(...)
test_set = max_digit_dataset(n_test, seed=1)  # your project: its test split
tokenizer = train_tokenizer(train_set)  # your project: AutoTokenizer.from_pretrained

print(train_set[0], "→", tokenizer.tokenize(train_set[0]["prompt"]))
print(f"{len(tokenizer)} tokens; {layers} layers, {hidden} wide")


# %% 18_language_models.ipynb cell 6


class CompletionOnlyCollator:
    """prompt + completion + EOS, right padded; labels -100 on prompt and padding."""

    def __init__(self, tokenizer, mask_prompt=True):
        self.tokenizer, self.mask_prompt = tokenizer, mask_prompt
        self.eos = tokenizer.eos_token_id

    def __call__(self, rows):
        ids, labels = [], []
        for row in rows:
            prompt = self.tokenizer(row["prompt"])["input_ids"]
            answer = self.tokenizer(row["completion"], add_special_tokens=False)
            answer = answer["input_ids"] + [self.eos]  # no second BOS before it
            ids.append(prompt + answer)
            labels.append(
                ([-100] * len(prompt) if self.mask_prompt else prompt) + answer
            )
        batch = self.tokenizer.pad({"input_ids": ids}, return_tensors="pt")
        width = batch["input_ids"].shape[1]
        batch["labels"] = torch.tensor(
            [row + [-100] * (width - len(row)) for row in labels]
        )
        return batch


# %% 18_language_models.ipynb cell 8
from transformers import Trainer, TrainingArguments

from helpers import run_dir

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("18_pattern")),
    max_steps=steps,
    per_device_train_batch_size=32,
    learning_rate=3e-3,
    lr_scheduler_type="constant",
    logging_steps=steps // 4,
    remove_unused_columns=False,  # the collator needs "prompt" and "completion"
    bf16=on_gpu and torch.cuda.is_bf16_supported(),
    seed=0,
)
(args,) = parser.parse_args_into_dataclasses()
model = tiny_llama(tokenizer, 0, hidden, layers)  # your project: from_pretrained(...)
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=train_set,
    data_collator=CompletionOnlyCollator(tokenizer),
)
trainer.add_callback(ShowPlan())
_ = trainer.train()


# %% 18_language_models.ipynb cell 9
def greedy(model, prompts):
    tokenizer.padding_side = "left"  # generate continues the prompts' right ends
    batch = tokenizer(list(prompts), return_tensors="pt", padding=True).to(model.device)
    tokenizer.padding_side = "right"
    with torch.no_grad():
        out = model.eval().generate(**batch, max_new_tokens=3, do_sample=False)
    new = out[:, batch["input_ids"].shape[1] :]
    return tokenizer.batch_decode(new, skip_special_tokens=True)


def exact_match(answers, wanted):
    return sum(a.strip() == w.strip() for a, w in zip(answers, wanted)) / len(wanted)


wanted = [c.strip() for c in test_set["completion"]]
score = exact_match(greedy(model, test_set["prompt"]), wanted)
baseline = max(wanted.count(w) for w in set(wanted)) / len(wanted)
print(f"exact match {score:.3f} on {len(wanted)} prompts (always '9': {baseline:.3f})")
