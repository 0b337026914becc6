"""Lesson 15's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import copy

from exercise_cases import answer_tests
from peft import LoraConfig, TaskType


def config_modules_to_save(rank):
    return LoraConfig(
        r=rank, lora_alpha=rank * 2, target_modules=["query", "key", "value"], modules_to_save=["classifier"]
    )


def config_regex(rank):
    return LoraConfig(
        task_type=TaskType.SEQ_CLS,
        r=rank,
        lora_alpha=2 * rank,
        lora_dropout=0.1,
        target_modules=r".*\.(query|key|value)$",
    )


def config_no_head(rank):
    return LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=["query", "key", "value"])


def config_query_value(rank):
    return LoraConfig(task_type="SEQ_CLS", r=rank, lora_alpha=2 * rank, target_modules=["query", "value"])


def config_rank_eight(rank):
    return LoraConfig(task_type="SEQ_CLS", r=8, lora_alpha=2 * rank, target_modules=["query", "key", "value"])


def config_alpha_sixteen(rank):
    return LoraConfig(task_type="SEQ_CLS", r=rank, lora_alpha=16, target_modules=["query", "key", "value"])


def merge_then_unload(peft_model):
    twin = copy.deepcopy(peft_model)
    twin.merge_adapter()
    return twin.unload()


def merge_safely(peft_model):
    return copy.deepcopy(peft_model).merge_and_unload(safe_merge=True)


def merge_in_place(peft_model):
    return peft_model.merge_and_unload()


def unload_without_merge(peft_model):
    return copy.deepcopy(peft_model).unload()


def base_model_only(peft_model):
    return copy.deepcopy(peft_model).get_base_model()


def copy_only(peft_model):
    return copy.deepcopy(peft_model)


CORRECT = {
    "q1": [config_modules_to_save, config_regex],
    "q2": [merge_then_unload, merge_safely],
}

MISTAKES = {
    "q1": [
        (config_no_head, "the classification head is frozen"),
        (config_query_value, "the exercise asks for query, key and value"),
        (config_rank_eight, "use the rank given"),
        (config_alpha_sixteen, "lora_alpha twice the rank"),
    ],
    "q2": [
        (merge_in_place, "work on a copy"),
        (unload_without_merge, "the adapter's update is missing"),
        (base_model_only, "still contains LoRA layers"),
        (copy_only, "returned a PeftModelForSequenceClassification"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
