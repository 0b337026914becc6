"""09 · GPU and performance, measured: the pattern, as a script.

Generated from notebooks/09_gpu_and_performance.ipynb by `python -m tools.examples`; do not edit.
Run: python 09_gpu_and_performance.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 09_gpu_and_performance.ipynb cell 4
import torch
from transformers import DataCollatorWithPadding, Trainer, TrainingArguments, set_seed

from helpers import run_dir
from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

on_cuda = torch.cuda.is_available()
batch_size, max_length, num_layers = (32, 128, 6) if on_cuda else (16, 64, 2)
set_seed(0)  # the classification head is new, drawn at random
model = load_model(num_layers=num_layers)  # your project: from_pretrained(name)
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
reviews = load_reviews()["train"]  # your project: load_dataset(name, split="train")
reviews = reviews.shuffle(seed=0).select(range((64 if on_cuda else 12) * batch_size))


def tokenize(batch):  # truncated to max_length, not padded: the collator pads
    return tokenizer(batch["text"], truncation=True, max_length=max_length)


train_set = reviews.map(tokenize, batched=True, remove_columns=["text", "movie"])


# %% 09_gpu_and_performance.ipynb cell 5
parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("09_pattern")),
    per_device_train_batch_size=batch_size // 2,  # what fits in memory ...
    gradient_accumulation_steps=2,  # ... twice: each update sees batch_size reviews
    train_sampling_strategy="group_by_length",  # reviews of similar length together
    bf16=on_cuda and torch.cuda.is_bf16_supported(),  # A100, H100 and newer
    fp16=on_cuda and not torch.cuda.is_bf16_supported(),  # a T4
    activation_checkpointing=False,  # True: less memory, more time (section 4)
    torch_compile=False,  # True: pays on long GPU runs (section 5)
    dataloader_num_workers=0,  # workers pay when batches are costly (section 6)
    num_train_epochs=1,
    learning_rate=1e-4,
    logging_steps=4,
    report_to="none",
    seed=0,
)
(args,) = parser.parse_args_into_dataclasses()
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=train_set,
    data_collator=DataCollatorWithPadding(tokenizer),  # pads to the batch's longest
)
trainer.add_callback(ShowPlan())
trainer.model_accepts_loss_kwargs = False  # with accumulation: lesson 07, section 5
result = trainer.train()


# %% 09_gpu_and_performance.ipynb cell 6
masks = [batch["attention_mask"] for batch in trainer.get_train_dataloader()]
real_tokens = sum(int(mask.sum()) for mask in masks)
padded_fraction = 1 - real_tokens / sum(mask.numel() for mask in masks)
real_share = real_tokens / (len(train_set) * max_length)
print(
    f"{trainer.state.global_step} updates of {batch_size} reviews, "
    f"{result.metrics['train_samples_per_second']:.0f} reviews/s; "
    f"padding: {padded_fraction:.0%} of the tokens computed "
    f"(padded to max_length it would be {1 - real_share:.0%})"
)
