"""00 · Start here: the pattern, as a script.

Generated from notebooks/00_start_here.ipynb by `python -m tools.examples`; do not edit.
Run: python 00_start_here.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 00_start_here.ipynb cell 4
import platform

import datasets
import torch
import transformers

ON_GPU = torch.cuda.is_available()
print(
    f"transformers {transformers.__version__} | torch {torch.__version__} |",
    f"datasets {datasets.__version__} | Python {platform.python_version()}",
)
if ON_GPU:
    print(f"GPU: {torch.cuda.get_device_name()}, bf16 {torch.cuda.is_bf16_supported()}")
else:
    print(f"no CUDA GPU: training runs on the CPU, {torch.get_num_threads()} threads")


# %% 00_start_here.ipynb cell 5
from transformers import Trainer, TrainingArguments, set_seed

from helpers import run_dir
from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer

set_seed(42)  # the new classification head is drawn at random: seed it first
# your project: AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)
model = load_model()
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(name)
# your project: datasets.load_dataset(name)
sample = load_reviews()["train"].shuffle(seed=0).select(range(16))
sample = sample.map(
    lambda batch: tokenizer(batch["text"], truncation=True, max_length=64),
    batched=True,
    remove_columns=["text", "movie"],
)
parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=run_dir("00_check"),  # your project: any folder, such as "runs/check"
    max_steps=2,
    per_device_train_batch_size=8,
    save_strategy="no",
    report_to="none",
    bf16=ON_GPU and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
trainer = Trainer(
    model=model, args=args, train_dataset=sample, processing_class=tokenizer
)
trainer.add_callback(ShowPlan())
train_result = trainer.train()
loss = train_result.training_loss
print(f"{train_result.global_step} training steps on {args.device}: loss {loss:.3f}")
