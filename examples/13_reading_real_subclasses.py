"""13 · Reading real subclasses: TRL's `SFTTrainer` and `DPOTrainer`: the pattern, as a script.

Generated from notebooks/13_reading_real_subclasses.ipynb by `python -m tools.examples`; do not edit.
Run: python 13_reading_real_subclasses.py [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]
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


# %% 13_reading_real_subclasses.ipynb cell 4
import huggingface_hub.constants

huggingface_hub.constants.HF_HUB_DISABLE_TELEMETRY = True  # no usage ping from TRL

import torch
import trl
from datasets import Dataset
from transformers import LlamaConfig, LlamaForCausalLM, TrainingArguments
from trl import DPOTrainer, GRPOTrainer, SFTTrainer

from helpers.data import load_reviews
from helpers.models import load_tokenizer

n_texts = 512 if torch.cuda.is_available() else 64
tokenizer = load_tokenizer()  # your project: AutoTokenizer.from_pretrained(...)
tokenizer.eos_token = "[SEP]"  # SFTTrainer appends an end-of-text token to every text
reviews = load_reviews()["train"]["text"][:n_texts]  # your project: load_dataset(...)
texts = Dataset.from_dict({"text": reviews})


def new_model():
    """A 2-layer Llama with random weights, sized for the tokenizer."""
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
    )
    return LlamaForCausalLM(config)


print(f"TRL {trl.__version__}, {len(texts)} texts")


# %% 13_reading_real_subclasses.ipynb cell 6
from transformers import set_seed

from helpers import run_dir

parser = HfArgumentParser(TrainingArguments)  # each field is a command-line flag
parser.set_defaults(
    output_dir=str(run_dir("13_sft")),
    per_device_train_batch_size=4,
    per_device_eval_batch_size=8,
    gradient_accumulation_steps=2,
    max_steps=16,
    logging_steps=4,
    learning_rate=3e-2,
    seed=0,
    save_strategy="no",
    report_to="none",
    use_cpu=not torch.cuda.is_available(),
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
)
(args,) = parser.parse_args_into_dataclasses()
set_seed(0)  # the model's random weights
trainer = SFTTrainer(
    model=new_model(),
    args=args,
    train_dataset=texts,
    eval_dataset=texts.select(range(8)),
    processing_class=tokenizer,
)
trainer.add_callback(ShowPlan())
trainer.train()
metrics = trainer.evaluate()
shown = ("eval_loss", "eval_entropy", "eval_mean_token_accuracy", "eval_num_tokens")
print({key: round(metrics[key], 3) for key in shown})
