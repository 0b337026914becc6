"""What trl renamed or removed in its config classes since the trl of transformers 4.x (facts, as data)."""

from __future__ import annotations

# TRL renamed these config fields; the installed trl has only the new name. From trl's own history:
# `max_seq_length` became `max_length` in SFTConfig (huggingface/trl #2895 and #2947, v0.16.0; the old name was
# removed in #3704).
TRL_RENAMED = {"max_seq_length": "max_length"}

# Fields of trl 0.11.4's config classes (September 2024: the trl of transformers 4.44 to 4.46) that the installed
# trl's classes of the same name no longer have. Read from the 0.11.4 wheel's trl/trainer/*_config.py (`pip download
# trl==0.11.4 --no-deps`, the class bodies' annotated fields) and compared with dataclasses.fields of the installed
# classes; the course's tests check that each is still gone. SFTConfig's max_seq_length is a rename
# (TRL_RENAMED) and is reported as one.
TRL_OLD_RELEASE = "0.11.4"
TRL_REMOVED_FIELDS: dict[str, frozenset[str]] = {
    "DPOConfig": frozenset(
        {
            "label_pad_token_id",
            "padding_value",
            "max_prompt_length",
            "max_target_length",
            "max_completion_length",
            "is_encoder_decoder",
            "generate_during_eval",
            "ref_model_init_kwargs",
            "model_adapter_name",
            "ref_adapter_name",
            "reference_free",
            "force_use_ref_model",
            "rpo_alpha",
        }
    ),
    "KTOConfig": frozenset(
        {
            "max_prompt_length",
            "max_completion_length",
            "label_pad_token_id",
            "padding_value",
            "truncation_mode",
            "generate_during_eval",
            "is_encoder_decoder",
            "ref_model_init_kwargs",
        }
    ),
    "SFTConfig": frozenset(
        {"max_seq_length", "dataset_batch_size", "num_of_sequences", "chars_per_token", "use_liger"}
    ),
    # GRPOConfig came after 0.11.4: its fields read the same way from trl 0.20.0's wheel (trl/trainer/grpo_config.py)
    "GRPOConfig": frozenset(
        {"max_prompt_length", "use_liger_loss", "vllm_guided_decoding_regex", "wandb_log_unique_prompts"}
    ),
}

# The trl release each class's removed fields were read from, where it is not TRL_OLD_RELEASE.
TRL_FIELD_RELEASE = {"GRPOConfig": "0.20.0"}

# What to do instead, where trl said it when it deprecated the field (trl 0.26.0's GRPOConfig help text).
TRL_REMOVED_ADVICE = {
    ("GRPOConfig", "max_prompt_length"): "trl no longer truncates prompts: filter or truncate your dataset's "
    "prompts before training",
}
