"""Seeded, deterministic training of a surrogate with a resumable, self-verifying checkpoint.

Determinism: one torch thread, ``torch.use_deterministic_algorithms``, the initialisation drawn from a
seeded torch generator and every batch from a seeded numpy generator whose state is saved. A checkpoint
holds the model, Adam's moments, the step, the batch generator's state and the loss trace, so training to
S steps at once and training to S1 < S, stopping and resuming to S give the same bits (a test holds
this). The learning rate is constant after an optional linear warm-up (``Recipe.warmup`` steps from lr/warmup
up to lr; the paper states no schedule, docs/reconstructions.md): it depends on the step only, never on the
budget, so a longer ``--steps`` resumes from the longest finished run of the same configuration.

Checkpoints live in the experiment cache in the project's sealed envelope (``attnsim.verify.cache``):
written atomically, read back only when the envelope's key (the whole training configuration) and
checksum match; anything else is set aside and training starts again.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from rich.console import Console

from attnsim.verify.cache import atomic_write, store, unseal
from attnsim.verify.experiments.surrogate import Shape, Surrogate
from attnsim.verify.progress import progress

KIND = "experiment-checkpoint"
CHECKPOINT_EVERY = 1000

Batches = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]
"""(generator, batch size) -> (tokens B x N, targets B x N), both integer arrays."""


@dataclass(frozen=True)
class Recipe:
    """One training run: the surrogate's shape, the optimiser's settings, the data's name and the seed."""

    shape: Shape
    task: str
    lr: float
    batch: int
    seed: int
    warmup: int = 0

    def rate(self, step: int) -> float:
        """The learning rate of (0-based) ``step``: lr * (step + 1) / warmup during the warm-up, then lr."""
        return self.lr * min(1.0, (step + 1) / self.warmup) if self.warmup else self.lr

    def key(self) -> dict[str, Any]:
        """Everything the weights depend on but the number of steps (a checkpoint's envelope key)."""
        return {"shape": self.shape.as_dict(), "task": self.task, "lr": self.lr, "batch": self.batch,
                "seed": self.seed, "warmup": self.warmup, "torch": torch.__version__, "format": 1}

    def folder(self, root: Path) -> Path:
        """Where this recipe's checkpoints live under the cache ``root``."""
        fingerprint = hashlib.sha256(json.dumps(self.key(), sort_keys=True).encode()).hexdigest()[:16]
        return root / "checkpoints" / fingerprint


@dataclass
class Trained:
    """A surrogate after ``step`` steps: the model, the loss of every step, where it came from."""

    model: Surrogate
    step: int
    losses: list[float]
    resumed_from: int
    seconds: float


def deterministic() -> None:
    """One thread and deterministic kernels: the same seed gives the same bits."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def _encode(state: dict[str, Any]) -> str:
    buf = io.BytesIO()
    torch.save(state, buf)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _decode(text: str) -> dict[str, Any]:
    return torch.load(io.BytesIO(base64.b64decode(text)), weights_only=True)


def _path(recipe: Recipe, root: Path, step: int) -> Path:
    return recipe.folder(root) / f"step-{step:08d}.json"


def _saved_steps(recipe: Recipe, root: Path) -> list[int]:
    folder = recipe.folder(root)
    if not folder.is_dir():
        return []
    steps = []
    for p in folder.glob("step-*.json"):
        try:
            steps.append(int(p.stem.removeprefix("step-")))
        except ValueError:
            continue
    return sorted(steps)


def save(recipe: Recipe, root: Path, step: int, model: Surrogate, opt: torch.optim.Optimizer,
         rng: np.random.Generator, losses: list[float]) -> Path:
    """Write the checkpoint of ``step`` atomically, sealed with the recipe's key and the step."""
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step,
             "rng": json.dumps(rng.bit_generator.state), "losses": torch.tensor(losses, dtype=torch.float64)}
    path = _path(recipe, root, step)
    store(path, KIND, {**recipe.key(), "step": step}, _encode(state), root)
    return path


def load(recipe: Recipe, root: Path, step: int) -> dict[str, Any] | None:
    """The verified checkpoint of ``step``, or None (absent, or set aside because it did not verify)."""
    text = unseal(_path(recipe, root, step), KIND, {**recipe.key(), "step": step}, root)
    if text is None:
        return None
    try:
        state = _decode(text)
    except Exception:  # a sealed entry that torch cannot read is not trusted either
        return None
    return state if isinstance(state, dict) and state.get("step") == step else None


def _fresh(recipe: Recipe) -> tuple[Surrogate, torch.optim.Optimizer, np.random.Generator]:
    torch.manual_seed(recipe.seed)
    model = Surrogate(recipe.shape)
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr)
    return model, opt, np.random.default_rng([recipe.seed, 1])


def _resume(recipe: Recipe, root: Path | None, steps: int) -> tuple[int, Surrogate, torch.optim.Optimizer,
                                                                      np.random.Generator, list[float]]:
    model, opt, rng = _fresh(recipe)
    if root is None:
        return 0, model, opt, rng, []
    for step in reversed([s for s in _saved_steps(recipe, root) if s <= steps]):
        state = load(recipe, root, step)
        if state is None:
            continue
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        rng.bit_generator.state = json.loads(state["rng"])
        return step, model, opt, rng, state["losses"].tolist()
    return 0, model, opt, rng, []


def train(recipe: Recipe, batches: Batches, steps: int, root: Path | None, console: Console | None = None,
          label: str = "training") -> Trained:
    """Train ``recipe`` to ``steps`` steps (Adam, cross-entropy over every token), resuming from the longest
    verified checkpoint at or below ``steps`` under ``root`` (None: no checkpoints). Progress on ``console``."""
    deterministic()
    begin = time.perf_counter()
    start, model, opt, rng, losses = _resume(recipe, root, steps)
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    with progress(console, f"{label} (from step {start})" if start else label, steps - start) as bar:
        for step in range(start, steps):
            x, y = batches(rng, recipe.batch)
            logits = model(torch.as_tensor(x))
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), torch.as_tensor(y).reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if recipe.warmup:
                for group in opt.param_groups:
                    group["lr"] = recipe.rate(step)
            opt.step()
            losses.append(float(loss.detach()))
            bar.advance()
            done = step + 1
            if root is not None and (done % CHECKPOINT_EVERY == 0 or done == steps):
                save(recipe, root, done, model, opt, rng, losses)
                _prune(recipe, root, keep=done, final=done == steps)
    if root is not None and start == steps and steps not in _saved_steps(recipe, root):
        save(recipe, root, steps, model, opt, rng, losses)
    model.eval()
    return Trained(model, steps, losses, start, time.perf_counter() - begin)


def _prune(recipe: Recipe, root: Path, keep: int, final: bool) -> None:
    """Drop this run's intermediate checkpoints below ``keep`` (finished runs' final checkpoints stay)."""
    finals = _finals(recipe, root)
    if final:
        finals.add(keep)
        atomic_write(recipe.folder(root) / "finals.json", json.dumps(sorted(finals)), root)
    for s in _saved_steps(recipe, root):
        if s < keep and s not in finals:
            _path(recipe, root, s).unlink(missing_ok=True)


def _finals(recipe: Recipe, root: Path) -> set[int]:
    try:
        return {int(s) for s in json.loads((recipe.folder(root) / "finals.json").read_text())}
    except (OSError, ValueError, TypeError):
        return set()
