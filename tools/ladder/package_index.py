"""The package index: the final releases of a package (PEP 691), the era caps, and the newest transformers
published against the newest that installs here (``python -m tools.ladder newest``, ``make test-latest``).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request

from tools.ladder.environments import run_command
from tools.ladder.rungs import INDEX, ROOT, LadderError, version_key

_FINAL = re.compile(r"\d+(?:\.\d+)*")


def fetch_index(name: str) -> dict:
    """The index's JSON page of one package (PEP 691): its files, with upload times and yanked marks."""
    url = INDEX.format(name=name)
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)
    except (OSError, ValueError) as error:
        raise LadderError(f"could not read {url} ({error}); this command needs the package index (PyPI).") from error


def _file_version(filename: str) -> str:
    """The version in a wheel or sdist file name (``transformers-4.46.0-py3-none-any.whl`` -> ``4.46.0``)."""
    if filename.endswith(".whl"):
        return filename.split("-")[1]
    for suffix in (".tar.gz", ".zip", ".tar.bz2"):
        if filename.endswith(suffix):
            return filename[: -len(suffix)].rsplit("-", 1)[1]
    return ""


def final_releases(index: dict) -> list[dict]:
    """Every final release with a file in the index page, in version order: ``{version, uploaded, yanked}``.

    ``uploaded`` is the earliest upload time of its files; ``yanked`` is the reason (or ``"yanked"``) when every
    file of the release is yanked, else ``""``. Pre-releases, dev and post releases are left out."""
    found: dict[str, dict] = {}
    for entry in index.get("files", []):
        version = _file_version(entry["filename"])
        if not _FINAL.fullmatch(version):
            continue
        item = found.setdefault(version, {"version": version, "uploaded": entry.get("upload-time", ""), "files": []})
        item["uploaded"] = min(item["uploaded"], entry.get("upload-time", "")) or item["uploaded"]
        yanked = entry.get("yanked", False)
        item["files"].append((yanked.strip() or "yanked") if isinstance(yanked, str) else ("yanked" if yanked else ""))
    releases = []
    for version in sorted(found, key=version_key):
        marks = found[version]["files"]
        releases.append(
            {"version": version, "uploaded": found[version]["uploaded"], "yanked": marks[0] if all(marks) else ""}
        )
    return releases


def era_cap(uploaded: str, releases: list[dict]) -> str | None:
    """The newest release of another package (``releases`` from :func:`final_releases`) published before
    ``uploaded``, not yanked; ``None`` when there is none."""
    before = [item["version"] for item in releases if item["uploaded"] < uploaded and not item["yanked"]]
    return before[-1] if before else None


def newest_published(index_output: str) -> str:
    """The newest version in ``pip index versions NAME``'s output (``transformers (X.Y.Z)``)."""
    match = re.search(r"^\S+ \(([^)]+)\)\s*$", index_output, re.MULTILINE)
    if not match:
        raise LadderError(f"`pip index versions` printed no version line:\n{index_output.strip()[-500:]}")
    return match.group(1)


def resolver_reason(pip_output: str) -> str:
    """What stopped pip, in one line: its own words ("No matching distribution found for ...", or the conflict it
    names), and the newest version the index serves of the missing requirement where pip lists them."""
    lines = [re.sub(r"^ERROR: ", "", line.strip()) for line in pip_output.splitlines()]
    served: list[str] = []
    for line in lines:
        match = re.match(r"Could not find a version that satisfies the requirement \S+.*\(from versions: (.*)\)", line)
        if match:
            served = [v.strip() for v in match.group(1).split(",") if _FINAL.fullmatch(v.strip())]
    for line in lines:
        match = re.match(r"No matching distribution found for (\S+)", line)
        if match:
            name = re.split(r"[<>=!~\[; ]", match.group(1), maxsplit=1)[0]
            newest = f"the index serves {name} up to {served[-1]}" if served else f"the index serves no {name}"
            return f'pip says "{line}"; {newest}'
    picked = [line for line in lines if "conflict" in line.lower() or line.startswith("Cannot install")]
    picked = picked or [line for line in lines if line and not line.startswith(("WARNING", "Ignored the following"))]
    if not picked:
        raise LadderError(f"pip failed without an error line:\n{pip_output.strip()[-500:]}")
    return "pip says " + "; ".join(f'"{line}"' for line in picked[:3])


def latest_summary(published: str, tested: str, pinned: str, reason: str, installed: bool = True) -> str:
    """The lines `make test-latest` prints about the release it tested (``installed=False``: the release it would
    install, the newest that installs with the pins, before anything is installed)."""
    did = "installed and tested" if installed else "the newest that installs with the pins"
    lines = [f"transformers: newest published {published}; {did} {tested}; the course pins {pinned}."]
    if version_key(tested) < version_key(published):
        lines.append(f"{published} could not be installed here: {reason or 'pip gave no reason'}.")
    elif published == tested:
        lines.append(f"{tested} is the newest published release.")
    if tested == pinned:
        lines.append(
            f"{tested} is the course's pin: `make test` already runs the suite on it in .venv, so `make test-latest` "
            "has nothing else to test."
        )
    return "\n".join(lines)


def pin_is_newest(found: dict, pinned: str) -> bool:
    """Whether the newest release that installs with the course's other pins (``found``, from
    :func:`command_newest`) is the pin itself: then a run on "the newest" would repeat ``make test``."""
    return found.get("installable") == pinned


def command_newest(python: str, extra: list[str], tries: int = 6) -> dict:
    """Ask pip (``python -m pip``) whether the newest published transformers installs with the ``extra``
    requirements; walk down the final releases (at most ``tries``) until one does. Nothing is installed
    (``--dry-run``). Returns ``{published, installable, reason, checked}``."""
    listing = run_command([python, "-m", "pip", "index", "versions", "transformers"]).stdout
    published = newest_published(listing)
    finals = [item["version"] for item in final_releases(fetch_index("transformers")) if not item["yanked"]]
    candidates = [version for version in finals if version_key(version) <= version_key(published)][::-1][:tries]
    reason, installable = "", None
    for version in candidates:
        trial = subprocess.run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--ignore-installed",
                "-q",
                f"transformers=={version}",
                *extra,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if trial.returncode == 0:
            installable = version
            break
        if not reason:
            reason = resolver_reason(trial.stdout + trial.stderr)
    return {
        "published": published,
        "installable": installable,
        "reason": reason,
        "checked": time.strftime("%Y-%m-%d", time.gmtime()),
    }
