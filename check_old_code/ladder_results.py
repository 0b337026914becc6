"""The one reader of the release ladder's results, ``docs/ladder/results.json``, and of the history before it,
``docs/ladder/history.json`` (4.0 to 4.22, read from their wheels): every other module asks it when a name, a value,
a call or an attribute changed, in the words a finding uses.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import cache

from course_facts.registry import ROOT

from .installed import installed_fields
from .signatures import _bind_described, _merged

LADDER_RESULTS = ROOT / "docs" / "ladder" / "results.json"
LADDER_HISTORY = ROOT / "docs" / "ladder" / "history.json"


@cache
def ladder() -> dict:
    """The ladder's results (``docs/ladder/results.json``), or an empty ladder when the file is not there."""
    if not LADDER_RESULTS.is_file():
        return {"releases": [], "results": {}}
    return json.loads(LADDER_RESULTS.read_text(encoding="utf-8"))


@cache
def history() -> dict:
    """The releases before the ladder, read from their wheels (``docs/ladder/history.json``), or none."""
    if not LADDER_HISTORY.is_file():
        return {"releases": [], "results": {}}
    return json.loads(LADDER_HISTORY.read_text(encoding="utf-8"))


def _call_releases() -> list[str]:
    """Every release whose Trainer calls are known, oldest first: the history's, then the ladder's."""
    return [*history()["releases"], *ladder()["releases"]]


def _inventory(version: str) -> dict:
    """What is known of one release's Trainer and TrainingArguments: its ladder inventory, or its history entry."""
    if version in history()["results"]:
        return history()["results"][version]
    return ladder()["results"][version]["inventory"]


def old_default(name: str) -> tuple[str, str] | None:
    """The default of the TrainingArguments field ``name`` as the newest history release wrote it (``"''"``,
    ``"None"``) and that release, or ``None`` when no release before the ladder had the field."""
    for version in reversed(history()["releases"]):
        default = history()["results"][version]["training_argument_defaults"].get(name)
        if default is not None:
            return default, version
    return None


def old_releases_setting(name: str) -> list[str]:
    """The history releases whose TrainingArguments assigned the field ``name`` itself after parsing
    (``local_rank`` from ``LOCAL_RANK``)."""
    return [v for v in history()["releases"] if name in history()["results"][v].get("training_arguments_set", ())]


def _adjacent(older: str, newer: str) -> bool:
    """Whether ``newer`` is the final release right after ``older`` (the bisection's list of final releases)."""
    finals = ladder().get("bisection", {}).get("finals", [])
    return older in finals and newer in finals and finals.index(newer) == finals.index(older) + 1


def _since(newer: str, older: str) -> str:
    """``"since 5.2.0; 5.1.0 still ..."`` when the two are adjacent releases, else ``"by 5.2.0"`` (not bisected)."""
    return f"since {newer}" if _adjacent(older, newer) else f"by {newer} (the releases between were not run)"


def ladder_history(probe_id: str) -> str:
    """What the ladder's probe ``probe_id`` (a claim that something is accepted) saw happen to it, as
    ``" (the ladder: deprecated from 4.41.2; accepted on 4.50.3, refused on 4.51.0)"``, or ``""``. A change the
    bisection narrowed (``results.json`` ``changes``) is given between its two adjacent releases."""
    data = ladder()
    if probe_id not in data.get("probes", {}):
        return ""
    warned = last_accepted = refused = None
    for version in data["releases"]:
        result = data["results"][version]["probes"][probe_id]
        if result["verdict"] == "holds":
            last_accepted, refused = version, None
            if warned is None and "warns" in result["evidence"]:
                warned = version
        elif result["verdict"] == "does not hold" and last_accepted and refused is None:
            refused = version
    for change in data.get("changes", []):
        if change["probe"] == probe_id and change.get("old") == "holds" and change.get("new") == "does not hold":
            last_accepted, refused = change["last_old"], change["first_new"]
    parts = [f"deprecated (it warns) from {warned} or earlier"] if warned else []
    if refused:
        gap = "" if _adjacent(last_accepted, refused) else " (the releases between were not run)"
        parts.append(f"accepted on {last_accepted}, refused on {refused}{gap}")
    return f" (the ladder: {'; '.join(parts)})" if parts else ""


def _bisected_removal(probe_id: str) -> dict | None:
    """The bisected change (``results.json`` ``changes``) where the probe ``probe_id`` stopped holding, or ``None``."""
    return next(
        (c for c in ladder().get("changes", []) if c["probe"] == probe_id and c.get("new") == "does not hold"), None
    )


def ladder_removal(name: str) -> str:
    """When the ladder saw ``TrainingArguments.name`` go: ``" (gone since 5.15.0; 5.14.1 still had it)"``, or ``""``."""
    if change := _bisected_removal(f"argument_{name}"):  # the probe that passes it, bisected
        return f" (gone since {change['first_new']}; {change['last_old']} still had it)"
    return _went(name, lambda inventory: name in inventory.get("training_arguments", ()))


def ladder_method_removal(name: str) -> str:
    """When the ladder saw ``Trainer.name`` go, in the same words as :func:`ladder_removal`."""
    return _went(name, lambda inventory: name in inventory.get("trainer_methods", {}))


def _went(name: str, present: Callable[[dict], bool]) -> str:
    """When the ladder saw ``present`` (a test of a release's inventory) stop holding for ``name``, or ``""``."""
    data = ladder()
    previous = None
    last_present = None
    gone_after = None
    for version in data["releases"]:
        here = present(data["results"][version]["inventory"])
        if here:
            last_present, gone_after = version, None
        elif previous is not None and present(data["results"][previous]["inventory"]):
            gone_after = version
        previous = version
    if last_present is None and data["releases"]:
        return f" (the ladder never saw it: gone before {data['releases'][0]}, its oldest release)"
    if gone_after:
        return f" (gone {_since(gone_after, last_present)}; {last_present} still had it)"
    return ""


def _release_calls(version: str, name: str, replaced: frozenset[str], caller: str | None = None) -> list | None:
    """How the ladder release ``version`` called ``self.name(...)``, leaving out the calls made by the ``replaced``
    methods (a subclass's own versions of them never make those calls), or only the calls ``caller`` makes; ``None``
    when the release's inventory does not say which method makes which call."""
    inventory = _inventory(version)
    if not replaced and caller is None and "trainer_calls" in inventory:
        return inventory["trainer_calls"].get(name)
    sites = inventory.get("trainer_call_sites")
    if sites is None:
        return None
    if caller is not None:
        return sites.get(name, {}).get(caller)
    return _merged(sites.get(name, {}), replaced) or None


def _history_fitted(
    name: str, fits: Callable[[list], bool], caller: str, covers: Callable[[list[str]], bool] | None
) -> bool:
    """Whether the releases before the ladder show an override working with ``caller``'s calls of ``self.name``:
    the newest history release whose calls from ``caller`` all fit it, when the override also takes every parameter
    that release's own ``Trainer.name`` had (``covers``). An override that had already dropped one of them (an
    ``evaluate`` without ``metric_key_prefix``) was written against no release's method: a call that passes it later
    comes with a new path (a dict of eval sets), not with a change to the old one."""
    fitted = [
        version
        for version in history()["releases"]
        if (shapes := _release_calls(version, name, frozenset(), caller)) and all(fits(shape) for shape in shapes)
    ]
    if not fitted:
        return False
    params = history()["results"][fitted[-1]].get("trainer_methods", {}).get(name, [])
    return covers is None or covers(params)


def _ladder_changed_caller(
    name: str, fits: Callable[[list], bool], callers: Iterable[str], covers: Callable[[list[str]], bool] | None = None
) -> str | None:
    """One of ``callers`` (methods whose installed calls of ``self.name`` the override cannot take) whose calls some
    ladder release made only in ways the override takes: the change 5.x made, even where another caller's call
    never fitted (a ``compute_loss`` without ``return_outputs`` trained on 4.x; only its evaluation failed). The
    ladder's releases are asked first, then the history before it (:func:`_history_fitted`)."""
    callers = list(callers)
    for caller in callers:
        for version in ladder()["releases"]:
            shapes = _release_calls(version, name, frozenset(), caller)
            if shapes and all(fits(shape) for shape in shapes):
                return caller
    for caller in callers:
        if _history_fitted(name, fits, caller, covers):
            return caller
    return None


def history_discarded_return(name: str) -> str | None:
    """The newest history release whose Trainer called ``self.name(...)`` only for its effect, never using what it
    returned, or ``None``."""
    found = [v for v in history()["releases"] if name in history()["results"][v].get("trainer_returns_discarded", ())]
    return found[-1] if found else None


def ladder_last_called(name: str) -> str | None:
    """``"the last release seen calling it: 5.0.0"`` when some release before the installed one called
    ``self.name(...)`` from the Trainer's own code, or ``None``."""
    called = [version for version in _call_releases() if _release_calls(version, name, frozenset())]
    return f"the last release seen calling it: {called[-1]}" if called else None


def ladder_call_change(
    name: str, fits: Callable[[list], bool], replaced: frozenset[str] = frozenset(), caller: str | None = None
) -> str:
    """The first ladder release whose Trainer calls ``self.name(...)`` in a way ``fits`` rejects, after one that fit
    (only the calls ``caller`` makes, when it is given)."""
    fitted = None
    for version in _call_releases():
        shapes = _release_calls(version, name, replaced, caller)
        if not shapes:
            continue
        if all(fits(shape) for shape in shapes):
            fitted = version
        elif fitted is not None:
            changed = f"in {version}" if _adjacent(fitted, version) else f"by {version} (releases between not run)"
            return f" (the call changed {changed}; {fitted} still called it in a way this override takes)"
    return ""


def _ladder_ever_fitted(name: str, fits: Callable[[list], bool], replaced: frozenset[str] = frozenset()) -> bool:
    """Whether some ladder release called ``self.name`` only in ways ``fits`` accepts, or the ladder never saw it
    called (then it cannot tell, and the override is judged on the installed calls alone)."""
    data = ladder()
    recorded = [shapes for version in data["releases"] if (shapes := _release_calls(version, name, replaced))]
    return not recorded or any(all(fits(shape) for shape in shapes) for shapes in recorded)


def _ladder_accepted_call(name: str, count: int, keywords: Sequence[str]) -> bool:
    """Whether some ladder release's ``Trainer.name`` took a call with ``count`` positional arguments (after self)
    and these keywords; true when the ladder does not know the method."""
    lists = [
        params for version in _call_releases() if (params := _inventory(version).get("trainer_methods", {}).get(name))
    ]
    return not lists or any(_bind_described(params[1:], count, keywords) is None for params in lists)


@cache
def ever_fields() -> frozenset[str]:
    """Every TrainingArguments field some release had: the installed ones, the ladder's and the history's."""
    data = ladder()
    seen = {name for v in data["releases"] for name in data["results"][v]["inventory"].get("training_arguments", ())}
    for version in history()["releases"]:
        seen |= set(history()["results"][version]["training_argument_defaults"])
    return frozenset(seen | installed_fields())


@cache
def _ladder_old_fields() -> frozenset[str]:
    """TrainingArguments fields that some ladder release had and the installed one does not."""
    data = ladder()
    seen = {name for v in data["releases"] for name in data["results"][v]["inventory"].get("training_arguments", ())}
    return frozenset(seen - installed_fields())


def _choices_in(inventory: dict, field_name: str) -> tuple[str, ...]:
    """The values a ladder release's inventory lists for an enum-valued field."""
    choices = inventory.get("argument_choices", {})
    if field_name == "eval_strategy":  # the same values under its 4.x name
        return (*choices.get("eval_strategy", ()), *choices.get("evaluation_strategy", ()))
    return tuple(choices.get(field_name, ()))


def ladder_value_removal(field_name: str, value: str) -> str | None:
    """When the ladder saw ``field_name=value`` stop being accepted, as ``" (gone since 5.0.0; 4.57.6 still took
    it)"``; ``None`` when no ladder release took it (a typo, not a removal: the installed error says so)."""
    data = ladder()
    inventories = [data["results"][version]["inventory"] for version in data["releases"]]
    if not any(value in _choices_in(inventory, field_name) for inventory in inventories):
        return None
    if change := _bisected_removal(f"value_{field_name}_{value}"):  # the value's own probe, bisected
        return f" (gone since {change['first_new']}; {change['last_old']} still took it)"
    return _went(value, lambda inventory: value in _choices_in(inventory, field_name))


def ladder_enum_value(enum: str, member: str) -> str | None:
    """The value the newest ladder release that had ``enum.member`` gave it (``OptimizerNames.ADAMW_HF``:
    ``"adamw_hf"``), or ``None`` if no release on the ladder had that member."""
    data = ladder()
    for version in reversed(data["releases"]):
        members = data["results"][version]["inventory"].get("enum_members", {}).get(enum, {})
        if member in members:
            return members[member]
    return None


@cache
def _old_trainer_init() -> tuple[str, ...]:
    """The oldest ladder release's ``Trainer.__init__`` parameters (``tokenizer=`` included), in order."""
    data = ladder()
    for version in data["releases"]:
        init = data["results"][version]["inventory"].get("trainer_init")
        if init:
            return tuple(init)
    return ()


def ladder_attribute_removal(name: str, seq2seq: bool = False) -> str | None:
    """When the ladder saw the Trainer (or the Seq2SeqTrainer) stop setting ``self.name`` (``self.fsdp``,
    ``self._max_length``), or ``None`` if no release set it."""
    kind = "Seq2SeqTrainer" if seq2seq else "Trainer"
    present = lambda inventory: name in inventory.get("trainer_attributes", {}).get(kind, ())  # noqa: E731
    if not any(present(ladder()["results"][version]["inventory"]) for version in ladder()["releases"]):
        return None
    return _went(name, present)


def oldest_release() -> str:
    """The oldest release the ladder ran (``""`` when there is no ladder)."""
    releases = ladder()["releases"]
    return releases[0] if releases else ""
