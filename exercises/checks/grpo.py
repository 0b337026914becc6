"""A reward function called as trl's ``GRPOTrainer`` calls it (trl 1.16, ``GRPOTrainer._calculate_rewards``), for the
checks of the exercises about GRPO rewards: the rewards come back as the trainer keeps them, or the learner hears
why the trainer would refuse them."""

from __future__ import annotations

from typing import Any

from exercises.checks.core import Wrong, learner_code


def rewards_as_grpo_receives(function: Any, kwargs: dict[str, Any], advice: str = "") -> Any:
    """Call a reward function the way trl 1.16's ``GRPOTrainer._calculate_rewards`` does, and return the rewards
    as it keeps them: a float32 tensor.

    What trl does (trl/trainer/grpo_trainer.py, ``_calculate_rewards``): an async function (``is_async_callable``:
    a coroutine function, or a callable whose ``__call__`` is one) is awaited on an event loop of its own thread;
    ``None`` becomes NaN (``[r if r is not None else torch.nan for r in output]``), the length must be the number
    of completions (a ``ValueError`` otherwise), and the rewards become ``torch.tensor(output, dtype=torch.float32)``,
    which refuses strings. The check raises :class:`Wrong` with a message of its own where trl would raise."""
    import asyncio
    import functools
    import inspect
    from concurrent.futures import ThreadPoolExecutor

    import torch

    unwrapped = function
    while isinstance(unwrapped, functools.partial):
        unwrapped = unwrapped.func
    is_async = inspect.iscoroutinefunction(unwrapped) or inspect.iscoroutinefunction(type(unwrapped).__call__)
    name = getattr(function, "__name__", "your reward function")
    arguments = ", ".join(f"{key}=..." for key in kwargs)
    with learner_code(f"GRPOTrainer {'awaited' if is_async else 'called'} {name}({arguments})", advice):
        if is_async:
            with ThreadPoolExecutor(max_workers=1) as loop_thread:  # trl awaits it on a loop of its own thread
                output = loop_thread.submit(asyncio.run, function(**kwargs)).result()
        else:
            output = function(**kwargs)
        if inspect.isawaitable(output):
            raise Wrong(
                f"{name} returned a coroutine that GRPOTrainer never awaits: it awaits a reward function only "
                "when the function itself is declared `async def` (or its __call__ is)."
            )
    count = len(kwargs["completions"])
    if isinstance(output, dict):
        raise Wrong(
            f"{name} returned a dict (keys {list(output)[:3]}); GRPOTrainer wants a list of {count} numbers, "
            "one reward per completion, in the order of the completions."
        )
    if isinstance(output, (str, bytes)) or not hasattr(output, "__iter__"):
        raise Wrong(f"return one reward per completion (a list of {count} numbers), got {output!r:.60}.")
    with learner_code("reading the rewards your function returned"):
        rewards = [reward if reward is not None else torch.nan for reward in output]
    if len(rewards) != count:
        raise Wrong(f"return one reward per completion: {count} completions, {len(rewards)} rewards.")
    try:
        return torch.tensor(rewards, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError) as error:
        kinds = sorted({type(reward).__name__ for reward in rewards})
        raise Wrong(
            f"GRPOTrainer turns the rewards into torch.tensor(rewards, dtype=torch.float32), which refused yours "
            f"({', '.join(kinds)}: {error}); return numbers (float), not text."
        ) from None
