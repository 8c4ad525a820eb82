"""Where the experiments keep what they computed: sealed, verified results keyed by everything they answer.

A result is stored in the project's envelope (``attnsim.verify.cache``) under a key holding the experiment,
its full configuration and a hash of the experiments' code, so a result computed by older code or for
another configuration is never shown as this one's.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from attnsim.verify.cache import store, unseal

KIND = "experiment-result"
DEFAULT_OUT = Path("attnsim-experiments")
"""The folder ``attnsim experiment`` writes by default; its ``cache`` holds checkpoints and results."""


def cache_root(out: Path) -> Path:
    """The cache folder inside an experiment's output folder."""
    return Path(out) / "cache"


COMPUTES = ("anna_layer", "evaluate", "induction", "match2", "store", "surrogate", "tasks", "training")
"""The modules whose code decides a stored result's numbers (the others only present them; a test keeps every
module of this package in one list or the other)."""
PRESENTS = ("__init__", "command", "compare", "definition", "diagnosis", "figures")


@lru_cache(maxsize=1)
def code_hash() -> str:
    """SHA-256 of the computing modules (:data:`COMPUTES`) as this process first read them: a result is only
    ever read by the code that computed it."""
    h = hashlib.sha256()
    for name in COMPUTES:
        path = Path(__file__).with_name(f"{name}.py")
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _key(experiment: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"experiment": experiment, "config": config, "code": code_hash()}


def _path(root: Path, key: dict[str, Any]) -> Path:
    fingerprint = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    return Path(root) / "results" / f"{key['experiment']}-{fingerprint}.json"


def load_result(root: Path, experiment: str, config: dict[str, Any]) -> dict[str, Any] | None:
    """The verified stored result of ``experiment`` at ``config``; None when absent or set aside."""
    key = _key(experiment, config)
    text = unseal(_path(root, key), KIND, key, Path(root))
    if text is None:
        return None
    try:
        result = json.loads(text)
    except ValueError:
        return None
    return result if isinstance(result, dict) and result.get("config") == config else None


def save_result(root: Path, experiment: str, config: dict[str, Any], result: dict[str, Any]) -> Path:
    """Store ``result`` (which carries ``config``) atomically in its envelope."""
    key = _key(experiment, config)
    path = _path(root, key)
    store(path, KIND, key, json.dumps(result, sort_keys=True), Path(root))
    return path
