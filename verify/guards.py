"""Resource guards: what a run will need, estimated before any work starts, and refused past a limit.

Every estimate is an upper-bound style count of the arrays a run keeps alive, from the parameters
alone (N, d, M, H, L and the numerics' width), so a refusal costs milliseconds. The limit is a share
of the memory the machine has available (``--max-memory`` changes it). Caps that no estimate needs:

* the score-grid denominator D of the exact kinds (``exact:D``, ``fraction:D``, ``symbolic:D``):
  a weight is z**(D·s), an integer of D·s·log2 z bits, so D far beyond the default 64 turns every
  weight into megabytes (and GMP aborts the process when it cannot allocate);
* the BITS of ``mp:BITS``;
* ``--workers``: at most the machine's cores (default: the cores).

The sizes below are deliberately coarse: they exist to turn "the machine is taken" into one line
naming the parameter, not to predict a run's peak to the byte.
"""

from __future__ import annotations

import math
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from attnsim.verify.registry import UsageError

MAX_GRID = 4096
"""Largest score-grid denominator D of the exact kinds of numerics."""

MAX_BITS = 1 << 16
"""Largest working precision of ``mp:BITS``, in bits."""

MAX_WEIGHT_BITS = 1 << 20
"""Largest exact softmax weight z**(D·s) a run may meet, in bits (checked against input files)."""

MEMORY_SHARE = 0.5
"""Default limit: this share of the memory available when the command starts."""

OBJECT_BYTES = 112
"""A Python number inside an object array: the object, its pointer and allocator slack."""

_EXACT_KINDS = ("exact", "fraction", "symbolic")
_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

_limit: int | None = None


def available_memory() -> int:
    """Bytes the kernel reports as available (``MemAvailable``), or physical memory where that is unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def parse_size(text: str, option: str = "--max-memory") -> int:
    """``"512M"``, ``"4G"``, ``"1.5GiB"``, ``"1000000"`` (bytes) or ``"25%"`` (of available memory)."""
    t = text.strip()
    if not t.isascii() or not t:
        raise UsageError(f"{option}: expected a size such as 4G, 512M or 25%, got {text!r}")
    if t.endswith("%"):
        try:
            share = float(t[:-1])
        except ValueError:
            share = math.nan
        if not 0 < share <= 100:
            raise UsageError(f"{option}: a share must lie in (0, 100]%, got {text!r}")
        return int(available_memory() * share / 100)
    m = _SIZE.match(t)
    if not m:
        raise UsageError(f"{option}: expected a size such as 4G, 512M or 25%, got {text!r}")
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if size < 1 << 20:
        raise UsageError(f"{option}: at least 1M, got {text!r}")
    return size


def set_memory_limit(text: str | None) -> None:
    """Set the limit for this process from ``--max-memory`` (None: the default share)."""
    global _limit
    _limit = None if text is None else parse_size(text)
    if text is not None:
        os.environ["ATTNSIM_MAX_MEMORY"] = text  # worker processes started later inherit it


def memory_limit() -> int:
    """The limit in force: ``--max-memory``, else ``$ATTNSIM_MAX_MEMORY``, else a share of available memory."""
    if _limit is not None:
        return _limit
    env = os.environ.get("ATTNSIM_MAX_MEMORY")
    if env:
        return parse_size(env, "ATTNSIM_MAX_MEMORY")
    return int(available_memory() * MEMORY_SHARE)


def human(n: float) -> str:
    """Bytes as a short human-readable size (powers of ten beyond a thousand PiB)."""
    if n >= 1000 * 2 ** 50:
        return f"{n:.1e} bytes"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


@dataclass(frozen=True)
class Estimate:
    """What a run will need: ``bytes`` in all, and the parameter that drives it (named in a refusal)."""

    bytes: float
    driver: str
    detail: str


def require_memory(est: Estimate, limit: int | None = None) -> None:
    """Refuse ``est`` with one line naming its driving parameter when it exceeds the limit."""
    limit = memory_limit() if limit is None else limit
    if est.bytes > limit:
        raise UsageError(f"{est.driver}: this run would need about {human(est.bytes)} ({est.detail}); the limit is "
                         f"{human(limit)} (--max-memory changes it)")


def numerics_width(name: str, option: str = "--numerics") -> tuple[str, int]:
    """(kind, argument) of a numerics name after the caps on D and BITS; the argument is D, BITS or 0."""
    kind, _, arg = name.partition(":")
    if not name.strip():
        raise UsageError(f"{option}: empty; choose e.g. exact, mp:200 or float64")
    if not name.isascii():
        raise UsageError(f"{option}: {name!r} has non-ASCII characters")
    if kind in _EXACT_KINDS:
        head = arg.split(":", 1)[0]
        if not head:
            return kind, 64
        if not head.isdigit():
            raise UsageError(f"{option}: {name}: the score-grid denominator D must be a positive integer")
        D = int(head)
        if not 1 <= D <= MAX_GRID:
            raise UsageError(f"{option}: {name}: D={D} is outside 1..{MAX_GRID} (a weight z**(D·s) has D·s·log2 z "
                             f"bits; at D={D} one weight of a score 64 takes {human(D * 64 / 8)})")
        return kind, D
    if kind == "mp":
        if not arg.isdigit():
            raise UsageError(f"{option}: {name}: expected mp:BITS with BITS a positive integer, e.g. mp:200")
        bits = int(arg)
        if not 2 <= bits <= MAX_BITS:
            raise UsageError(f"{option}: {name}: BITS={bits} is outside 2..{MAX_BITS}")
        return kind, bits
    return kind, 0


def entry_bytes(numerics: str, score_bits: float) -> float:
    """Bytes of one softmax weight in ``numerics`` when scores reach ``score_bits`` bits above the grid."""
    kind, arg = numerics_width(numerics)
    if kind in _EXACT_KINDS:
        return OBJECT_BYTES + arg * score_bits / 8
    if kind == "mp":
        return OBJECT_BYTES + arg / 8
    if kind == "float64":
        return 8.0
    return 16.0  # fixed-width formats: float64 values and a rounding scratch copy


def typical_score(d: int, x_max: float = 1.0) -> float:
    """A score the default cases reach: inputs in [-x_max, x_max], weights in [-1, 1] (``verify.cases``)."""
    return max(1.0, d * x_max * x_max)


def estimate_check(claim: str, params: Mapping[str, Any], numerics: str) -> Estimate:
    """A check's memory: its weights (Fractions, d×d per head and layer), inputs, and — for the Two Heads
    claims, whose reference is dense attention — the N×N weights per head (object arrays in the exact kinds
    and mp). The other papers' references (hashing, MPC rounds, TinT modules) keep O(N) values per layer."""
    N = _int(params, "N", "n", default=64)
    d = _int(params, "d", default=4)
    H = _int(params, "H", default=1)
    L = _int(params, "L", default=1)
    weights = 3.0 * H * L * d * d * OBJECT_BYTES
    inputs = 4.0 * L * N * d * OBJECT_BYTES
    per_row = N if claim.startswith("two_heads.") else 4
    scores = 3.0 * H * N * per_row * entry_bytes(numerics, typical_score(d))
    total = weights + inputs + scores
    parts = {"--d": weights, "--N": inputs + scores}
    driver = max(parts, key=lambda k: parts[k])
    return Estimate(total, driver, f"N={N}, d={d}, H={H}, L={L}, {numerics}")


def estimate_long_run(N: int, M: int, d: int, H: int) -> Estimate:
    """``attnsim run``: O(N·d) float64 activations (input, output, queries, keys, values) and a round of
    M×M score blocks per worker."""
    total = 8.0 * (6 * N * d * H + 4 * M * M * H)
    return Estimate(total, "--N" if N * d >= M * M else "--M", f"N={N}, M={M}, d={d}, H={H}, float64")


def estimate_precision(Ns: list[int], M: int, d: int) -> Estimate:
    """``attnsim precision``: the largest N's input, exact truth scores of the sampled blocks (object arrays)."""
    N = max(Ns)
    total = OBJECT_BYTES * (4.0 * N * d + 2.0 * N * M)
    return Estimate(total, "--N", f"N={N}, M={M}, d={d}")


def check_workers(workers: int | None, option: str = "--workers") -> int:
    """``workers`` (None: the cores), refused outside 1..cores."""
    cores = os.cpu_count() or 1
    if workers is None:
        return cores
    if not 1 <= workers <= max(cores, 2):
        raise UsageError(f"{option}: must lie in 1..{max(cores, 2)} (this machine has {cores} cores), got {workers}")
    return workers


def _int(params: Mapping[str, Any], *names: str, default: int) -> int:
    for name in names:
        v = params.get(name)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return default


_NPY_DTYPES = "iuf"


def read_npy(path: str, shape: tuple[int, int], option: str = "--input-file") -> Any:
    """The array in the .npy file ``path``, after its header says it is a plain numeric array of ``shape``.

    The header is read first, so a file claiming a huge shape is refused without allocating it; folders,
    empty files, .npz archives, pickles and dtypes that cannot be read exactly (float128, complex) are
    refused with one line naming the path.
    """
    import numpy as np

    if not path or not path.strip():
        raise UsageError(f"{option}: empty path")
    if os.path.isdir(path):
        raise UsageError(f"{option}: {path!r} is a folder, not a .npy file")
    if not os.path.exists(path):
        raise UsageError(f"{option}: no such file {path!r}")
    try:
        with open(path, "rb") as f:
            head = f.read(6)
            if not head:
                raise UsageError(f"{option}: {path!r} is empty (0 bytes)")
            if head.startswith(b"PK"):
                raise UsageError(f"{option}: {path!r} is a .npz archive; save X alone with numpy.save")
            f.seek(0)
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                file_shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            else:
                file_shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    except UsageError:
        raise
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{option}: cannot read {path!r} as .npy ({exc})") from None
    if dtype.kind not in _NPY_DTYPES or dtype.itemsize > 8 or dtype.hasobject:
        raise UsageError(f"{option}: {path!r} holds dtype {dtype}; expected integers of up to 64 bits or "
                         "float16/32/64")
    if tuple(file_shape) != tuple(shape):
        raise UsageError(f"{option}: {path!r} holds shape {tuple(file_shape)}, expected (N, d) = {tuple(shape)}")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{option}: cannot read {path!r} as .npy ({exc})") from None


def first_unrepresentable(arr: Any, numerics: str, d: int) -> tuple[tuple[int, ...], str] | None:
    """The index of the first value of ``arr`` that ``numerics`` cannot carry through attention, and why.

    Exact kinds: the largest weight z**(D·s), with a score s up to d³·x² (inputs x, weights in [-1, 1]),
    must stay within :data:`MAX_WEIGHT_BITS`. float64: the value itself must be a float64 (integers beyond
    2^53 are not) and d³·x² must not overflow. mp:BITS: integers must fit BITS bits. NaN and inf never.
    """
    import numpy as np

    kind, arg = numerics_width(numerics)
    flat = arr.reshape(-1)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(flat)
        if bad.any():
            i = int(np.argmax(bad))
            return np.unravel_index(i, arr.shape), f"non-finite value {flat[i]} (NaN/inf are not inputs)"
    mags = np.abs(flat.astype(np.float64))
    cube = float(d) ** 3
    if kind in _EXACT_KINDS:
        limit = math.sqrt(MAX_WEIGHT_BITS / (arg * cube))
        why = f"scores up to d³·x² make a weight z**(D·s) of more than {MAX_WEIGHT_BITS} bits at D={arg}"
    elif kind == "float64" or kind in ("float", "fixed"):
        limit = math.sqrt(np.finfo(np.float64).max / cube)
        why = "scores up to d³·x² overflow float64"
    else:
        limit = math.inf
        why = ""
    over = mags > limit
    if over.any():
        i = int(np.argmax(over))
        return np.unravel_index(i, arr.shape), f"|{flat[i]}| > {limit:.3g}: {why}"
    width = arg if kind == "mp" else (None if kind in _EXACT_KINDS else 53)
    if arr.dtype.kind in "iu" and width is not None:
        wide = [abs(v).bit_length() > width for v in flat.tolist()]
        if any(wide):
            i = wide.index(True)
            return np.unravel_index(i, arr.shape), f"{flat[i]} needs more than {width} bits"
    return None


def check_input_file(path: str | None, params: Mapping[str, Any], numerics: str) -> None:
    """Refuse an ``--input-file`` that cannot be read as (N, d) or holds a value ``numerics`` cannot carry."""
    if path is None:
        return
    N, d = _int(params, "N", default=64), _int(params, "d", default=4)
    arr = read_npy(path, (N, d))
    bad = first_unrepresentable(arr, numerics, d)
    if bad is not None:
        idx, why = bad
        at = tuple(int(i) for i in idx)
        raise UsageError(f"--input-file: the value at index {at} cannot be used in {numerics}: {why}")


def check_run(claim: str, params: Mapping[str, Any], numerics: str) -> None:
    """Everything refused before a check starts: numerics caps, memory estimate, the input file."""
    format_option(numerics, "--numerics")
    require_memory(estimate_check(claim, params, numerics))
    check_input_file(params.get("input_file"), params, numerics)


def npy_header_bytes(path: str) -> tuple[tuple[int, ...], float] | None:
    """(shape, bytes once read as exact numbers) that a .npy file's header claims; None without a readable header."""
    import numpy as np

    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape = reader(f)[0]
    except (ValueError, OSError, EOFError):
        return None
    return tuple(shape), float(math.prod(shape)) * OBJECT_BYTES


def precheck(claim: str, raw: Mapping[str, str], numerics: str | None) -> None:
    """Refusals from the raw command line alone, before any checker is loaded (so they take milliseconds):
    empty or non-ASCII values, the numerics caps, the memory of N, d, H, L, and an input file's header."""
    for name, value in raw.items():
        if not value.strip():
            raise UsageError(f"--{name}: empty value")
        if not value.isascii():
            raise UsageError(f"--{name}: {value!r} has non-ASCII characters (digits are 0-9)")
    if numerics is not None:
        numerics_width(numerics)
    dims = {k: int(v) for k, v in raw.items() if k in ("N", "n", "d", "H", "L") and v.isdigit()}
    if dims:
        require_memory(estimate_check(claim, dims, numerics or "float64"))
    path = raw.get("input_file")
    if path and os.path.isfile(path):
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
        raise UsageError(f"{option}: {str(exc).removeprefix('--numerics: ')}") from None


def positive(minimum: int = 1, **values: int) -> None:
    """Refuse any of ``values`` (name=value, underscores for dashes) below ``minimum``."""
    for name, v in values.items():
        if v < minimum:
            raise UsageError(f"--{name.replace('_', '-')}: must be >= {minimum}, got {v}")


@contextmanager
def private_hypothesis_storage() -> Iterator[None]:
    """Run a checker's hypothesis search with its storage (example database, constants cache) in a temporary
    folder that is removed afterwards, so ``attnsim check`` leaves no ``.hypothesis/`` in the user's folder.
    The previous storage folder (pytest's, say) is restored."""
    import tempfile

    from hypothesis import configuration

    before = getattr(configuration, "__hypothesis_home_directory", None)
    with tempfile.TemporaryDirectory(prefix="attnsim-hypothesis-") as tmp:
        configuration.set_hypothesis_home_dir(tmp)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(before)
