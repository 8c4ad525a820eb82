"""Resource guards: what a run will need, estimated before any work starts, and refused past a limit.

The estimates of checks are the cost models of :mod:`attnsim.verify.cost`; the limits (``--max-memory``,
``--max-time`` and the address-space backstop) are :mod:`attnsim.verify.limits`; input files are read by
:mod:`attnsim.verify.inputs`. This module applies them to each command before its work, and refuses
output paths that cannot be written. ``--workers`` is capped at the machine's cores (default: the cores).
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping

from attnsim.verify.cost import OBJECT_BYTES, estimate, numerics_width
from attnsim.verify.inputs import check_input_file, npy_header_bytes, read_npy, regular_file
from attnsim.verify.limits import Estimate, human, memory_limit, require_memory, set_memory_limit, set_time_limit
from attnsim.verify.registry import FLOAT_MAX, INT_MAX, UsageError, flag
from attnsim.verify.relations import check_relations

__all__ = ["Estimate", "check_run", "estimate_long_run", "estimate_precision", "human", "memory_limit", "precheck",
           "read_npy", "require_memory", "set_memory_limit", "set_time_limit"]


def estimate_long_run(N: int, M: int, d: int, H: int) -> Estimate:
    """``attnsim run``: O(N·d) float64 activations (input, output, queries, keys, values) and a round of
    M×M score blocks per worker."""
    total = 8.0 * (6 * N * d * H + 4 * M * M * H)
    return Estimate(total, "--N" if N * d >= M * M else "--M", f"N={N}, M={M}, d={d}, H={H}, float64")


def estimate_precision(Ns: list[int], M: int, d: int, sample_blocks: int = 16, scale_N: int | None = None,
                       constructions: int = 3) -> Estimate:
    """``attnsim precision``: memory for the largest N's input and the exact truth scores of its sampled blocks
    (object arrays); time for every N's width search, about 2.5·10^-4 s per position per sampled query block at
    d = 4 and three constructions (measured on two loaded cores, CPU time: N·blocks = 65536 took 4.6 to 7.6 s
    at M = 8 and 32, 262144 took 41 s; rounded up). The refusal names the option driving the largest term."""
    sizes = {"--N": max(Ns), **({"--scale-N": scale_N} if scale_N else {})}
    top, N = max(sizes.items(), key=lambda kv: kv[1])
    ratio = {top: N / 4096, "--d": d / 4, "--M": M / 32}  # each against its usual size
    total = OBJECT_BYTES * (4.0 * N * d + 2.0 * N * M)
    other = "--d" if 4.0 * N * d >= 2.0 * N * M else "--M"
    driver = other if ratio[other] > ratio[top] else top

    def blocks(n: int) -> float:
        return float(min(sample_blocks, math.ceil(n / M)) if sample_blocks else math.ceil(n / M))

    every = [*Ns, *([scale_N] if scale_N else [])]
    seconds = sum(2.5e-4 * n * blocks(n) * (d / 4) * (constructions / 3) for n in every)
    shown = f"N={','.join(map(str, Ns))}" + (f", scale N={scale_N}" if scale_N else "")
    return Estimate(total, driver, f"{shown}, M={M}, d={d}, sample blocks={sample_blocks or 'all'}", seconds,
                    "--d" if ratio["--d"] > ratio[top] else top)


def check_workers(workers: int | None, option: str = "--workers") -> int:
    """``workers`` (None: the cores), refused outside 1..cores."""
    cores = os.cpu_count() or 1
    if workers is None:
        return cores
    if not 1 <= workers <= max(cores, 2):
        raise UsageError(f"{option}: must lie in 1..{max(cores, 2)} (this machine has {cores} cores), got {workers}")
    return workers


def check_run(claim: str, params: Mapping[str, Any], numerics: str | None) -> None:
    """Everything refused before a check starts: numerics caps, the cost estimate, the input file (None: a claim
    that takes no numerics)."""
    format_option(numerics, "--numerics")
    check_relations(claim, params, numerics)
    require_memory(estimate(claim, params, numerics))
    if numerics is not None:
        check_input_file(params.get("input_file"), params, numerics)


def _number(text: str) -> float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def precheck(claim: str, raw: Mapping[str, str], numerics: str | None) -> None:
    """Refusals from the raw command line alone, before any checker is loaded (so they take milliseconds):
    empty or non-ASCII values, integers beyond every domain, the numerics caps, the cost of the sizes given
    (the others at the cost model's reference sizes), a non-regular input file and an input file's header."""
    for name, value in raw.items():
        if not value.strip():
            raise UsageError(f"{flag(name)}: empty value")
        if not value.isascii():
            raise UsageError(f"{flag(name)}: {value!r} has non-ASCII characters (digits are 0-9)")
    numbers = {k: v for k, v in ((k, _number(t)) for k, t in raw.items()) if v is not None}
    for name, v in numbers.items():
        if abs(v) > max(INT_MAX, FLOAT_MAX):
            raise UsageError(f"{flag(name)}: must be <= {INT_MAX:g}, got {raw[name]}")
    format_option(numerics, "--numerics")
    names = {k: t for k, t in raw.items() if k not in numbers}  # a TinT case's: a model whose reference is a name
    require_memory(estimate(claim, {**names, **numbers}, numerics))
    path = raw.get("input_file")
    if path:
        regular_file(path, "--input-file")
        claimed = npy_header_bytes(path)
        if claimed is not None and claimed[1] > memory_limit():
            raise UsageError(f"--input-file: {path!r} claims shape {claimed[0]}, about {human(claimed[1])} as exact "
                             f"numbers; the limit is {human(memory_limit())} (--max-memory changes it)")


_SYSTEM_TREES = ("/proc", "/sys", "/dev")


def _nearest_existing(path: str) -> str:
    p = os.path.abspath(path)
    while not os.path.exists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p


def _probe_writable(folder: str, option: str, shown: str) -> None:
    """Create and remove a file in ``folder`` (root ignores permission bits; only a real write tells)."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".attnsim-probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise UsageError(f"{option}: cannot write in {shown!r} ({exc.strerror or exc})") from None


def _not_system(path: str, option: str) -> None:
    real = os.path.realpath(path)
    tree = next((t for t in _SYSTEM_TREES if real == t or real.startswith(t + "/")), None)
    if tree is not None:
        raise UsageError(f"{option}: {path!r} lies in {tree}, which holds no output files")


def output_folder(path: Any, option: str = "--out") -> None:
    """Refuse an output folder that is empty, a file, a system tree or not writable; nothing is created."""
    text = str(path) if path is not None else ""
    if not text.strip():
        raise UsageError(f"{option}: empty path")
    _not_system(text, option)
    if os.path.exists(text) and not os.path.isdir(text):
        raise UsageError(f"{option}: {text!r} is a file, not a folder")
    base = _nearest_existing(text)
    if not os.path.isdir(base):
        raise UsageError(f"{option}: {base!r} is a file, so {text!r} cannot be a folder")
    _probe_writable(base, option, text)


def output_file(path: Any, option: str = "--json") -> None:
    """Refuse an output file path that is empty, a folder, a system path or not writable; nothing is created."""
    text = str(path) if path is not None else ""
    if not text.strip():
        raise UsageError(f"{option}: empty path")
    if os.path.realpath(text) == os.devnull:
        return
    if os.path.isdir(text):
        raise UsageError(f"{option}: {text!r} is a folder; give a file name")
    _not_system(text, option)
    parent = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(parent):
        raise UsageError(f"{option}: the folder {parent!r} does not exist")
    if os.path.exists(text) and not os.access(text, os.W_OK):
        raise UsageError(f"{option}: {text!r} is not writable")
    _probe_writable(parent, option, text)


def not_empty(**options: Any) -> None:
    """Refuse any of ``options`` (name=value, underscores for dashes) given as an empty string."""
    for name, value in options.items():
        if isinstance(value, str) and not value.strip():
            raise UsageError(f"--{name.replace('_', '-')}: empty value")


def format_family(family: str, exp_bits: int, int_bits: int | None, options: str) -> None:
    """Refuse a precision study's format family that no format of the search could have: exponent bits
    outside the float formats' range, integer bits below the sign bit or beyond float64's 53, unknown options.
    Each is probed by building the narrowest and the widest format of the family."""
    from attnsim.sim.numerics import NumericsError, get_numerics

    if family == "float":
        what, probes = "--exp-bits", [f"float:{exp_bits}.{p}" for p in (1, 52)]
        if not 2 <= exp_bits <= 11:
            raise UsageError(f"--exp-bits: the float formats have 2..11 exponent bits, got {exp_bits}")
    elif family == "fixed":
        what = "--int-bits"
        if int_bits is not None and not 1 <= int_bits <= 52:
            raise UsageError(f"--int-bits: a fixed format has 1..52 integer bits (with the sign), got {int_bits}")
        probes = [f"fixed:q{int_bits or 8}.{p}" for p in (0, 53 - (int_bits or 8))]
    else:
        return
    for name in probes:
        try:
            get_numerics(name + (f":{options}" if options else ""))
        except NumericsError as exc:
            text = str(exc)
            raise UsageError(f"--options: {text.split('unknown option ', 1)[1]}" if "unknown option" in text
                             else f"{what}: {text}") from None


def format_option(name: str | None, option: str) -> None:
    """Refuse a numerics name given to ``option`` that no backend builds (None: not given)."""
    from attnsim.sim.numerics import NumericsError, get_numerics

    if name is None:
        return
    numerics_width(name, option)
    try:
        get_numerics(name)
    except NumericsError as exc:
        raise UsageError(f"{option}: {exc.message}") from None


def positive(minimum: int = 1, **values: int) -> None:
    """Refuse any of ``values`` (name=value, underscores for dashes) below ``minimum``."""
    for name, v in values.items():
        if v < minimum:
            raise UsageError(f"--{name.replace('_', '-')}: must be >= {minimum}, got {v}")
