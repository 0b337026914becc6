"""Security hygiene of the course, as tests: no secrets, no remote code, safe loading, safetensors checkpoints.

Code is checked with ``ast`` (notebook code cells and Python files), so prose that *warns* about
``trust_remote_code=True`` does not trip the check, while any call that passes it does.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest
from notebook_sources import notebook_python

ROOT = Path(__file__).resolve().parent.parent
# Token shapes: Hugging Face, AWS access keys, GitHub, OpenAI-style, Slack, and private key blocks.
TOKEN_PATTERNS = {
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),
    "AWS access key id": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "AWS secret key assignment": re.compile(r"aws_secret_access_key\s*[=:]\s*['\"]?[A-Za-z0-9/+=]{40}"),
    "GitHub token": re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}"),
    "API secret key": re.compile(r"\bsk-[A-Za-z0-9_-]{32,}"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----"),
}


def course_files(*suffixes: str) -> list[Path]:
    """Files of the course with one of ``suffixes``: what git tracks or would add, not what it ignores (virtual
    environments, runs, caches, and the GPU bundle's wheels and stand-in environment that the suite leaves in
    ``.gpu/``, so that a second `make test` scans what the first did)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode:
        raise RuntimeError(
            f"the security scan lists the course's files with git, which said: {listed.stderr.strip()}\n"
            "Run the tests in a git checkout of the course (a copy: `git init && git add -A` first)."
        )
    paths = [ROOT / name for name in listed.stdout.split("\0") if name]
    return sorted(path for path in paths if path.suffix in suffixes and path.is_file())


def python_sources() -> dict[str, str]:
    """``{place: code}`` for every .py file and the code cells of every notebook (magics blanked)."""
    sources = {str(p.relative_to(ROOT)): p.read_text() for p in course_files(".py")}
    for notebook in course_files(".ipynb"):
        sources[str(notebook.relative_to(ROOT))] = notebook_python(notebook)
    return sources


def find_tokens(text: str) -> list[str]:
    """Names of the token shapes found in ``text``."""
    return [name for name, pattern in TOKEN_PATTERNS.items() if pattern.search(text)]


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else "?"
        return f"{owner}.{func.attr}"
    return func.id if isinstance(func, ast.Name) else "?"


def unsafe_calls(code: str) -> list[str]:
    """Calls in ``code`` that break the rules, each as ``line: why``."""
    problems = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        remote = keywords.get("trust_remote_code")
        if remote is not None and not (isinstance(remote, ast.Constant) and remote.value is False):
            problems.append(f"line {node.lineno}: trust_remote_code is set (never run a model repository's code)")
        if _call_name(node) == "torch.load":
            safe = keywords.get("weights_only")
            if not (isinstance(safe, ast.Constant) and safe.value is True):
                problems.append(f"line {node.lineno}: torch.load without weights_only=True")
        for name in ("safe_serialization", "save_safetensors"):
            value = keywords.get(name)
            if isinstance(value, ast.Constant) and value.value is False:
                problems.append(f"line {node.lineno}: {name}=False (checkpoints must be safetensors)")
        if _call_name(node) == "torch.save" and node.args:
            saved = ast.unparse(node.args[0])
            if "state_dict" in saved or re.search(r"\bmodel\b", saved):
                problems.append(
                    f"line {node.lineno}: torch.save of model weights ({saved}); use save_pretrained "
                    "or safetensors.torch.save_file"
                )
    return problems


SOURCES = python_sources()
TEXT_FILES = course_files(".py", ".ipynb", ".md", ".sh", ".txt", ".toml", ".cfg", ".json", ".yml", ".yaml") + [
    p for p in (ROOT / "Makefile",) if p.exists()
]


def test_the_scans_see_the_course() -> None:
    assert any(place.startswith("helpers") for place in SOURCES) and any(p.suffix == ".ipynb" for p in TEXT_FILES)


@pytest.mark.parametrize("path", TEXT_FILES, ids=[str(p.relative_to(ROOT)) for p in TEXT_FILES])
def test_no_token_like_strings(path: Path) -> None:
    found = find_tokens(path.read_text(errors="replace"))
    assert not found, f"{path.relative_to(ROOT)} holds something shaped like a {found}: remove it and revoke the secret"


@pytest.mark.parametrize("place", sorted(SOURCES))
def test_code_follows_the_safety_rules(place: str) -> None:
    try:
        problems = unsafe_calls(SOURCES[place])
    except SyntaxError as error:
        pytest.fail(f"{place} does not parse: {error}")
    assert not problems, f"{place}:\n" + "\n".join(problems)


def test_token_scanner_catches_tokens() -> None:
    fake = {
        "hf": "hf_" + "a1B2" * 9,
        "aws": "AKIA" + "ABCDEFGH23456789",
        "gh": "ghp_" + "x" * 36,
        "key": "-----BEGIN " + "PRIVATE KEY-----",
    }
    for name, token in fake.items():
        assert find_tokens(f"token = '{token}'"), f"the scanner missed a {name} token"
    assert not find_tokens("hf_hub_download, AKIA is short, sk-learn, hf_ABC")


def test_rule_checker_catches_unsafe_calls() -> None:
    code = (
        "AutoModel.from_pretrained('x', trust_remote_code=True)\n"
        "torch.load('optimizer.pt')\n"
        "torch.load('a.pt', weights_only=False)\n"
        "model.save_pretrained('out', safe_serialization=False)\n"
        "torch.save(model.state_dict(), 'weights.pt')\n"
    )
    assert len(unsafe_calls(code)) == 5
    safe = (
        "AutoModel.from_pretrained('x')\ntorch.load('a.pt', weights_only=True)\n"
        "torch.save({'note': 1}, 'x.pt')\nAutoModel.from_pretrained('x', trust_remote_code=False)\n"
    )
    assert unsafe_calls(safe) == []


def test_models_are_saved_as_safetensors(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    from helpers.models import load_model

    model = load_model(num_layers=1)
    model.save_pretrained(tmp_path)
    names = {p.name for p in tmp_path.iterdir()}
    assert "model.safetensors" in names and not {n for n in names if n.endswith((".bin", ".pt", ".pth"))}, names
    assert set(load_file(tmp_path / "model.safetensors")) == set(model.state_dict())
