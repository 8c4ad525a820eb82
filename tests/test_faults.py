"""The fault catalogue (docs/faults.md): bad inputs and faults, each ending in one line and a known exit code.

Every row runs the command line in this process (the refusals come before any work, so a row takes
milliseconds once the package is loaded) and asserts: exactly one line on stderr, starting ``error:``;
the exit code; no traceback; no process left behind; the working folder unchanged. Faults that need a
real process are in ``test_faults_processes.py``, ``test_faults_memory.py`` and ``test_faults_dask.py``, faults of
the caches in ``test_faults_cache.py``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from attnsim.verify.cli.app import main
from attnsim.verify.registry import all_checkers

CLI = [sys.executable, "-m", "attnsim.verify.cli"]
CHECK = ["check", "two_heads.lemma_3_1", "--N", "64", "--M", "8", "--d", "4"]
PREC = ["precision", "two_heads.lemma_3_1", "--N", "64", "--M", "8"]


def _npy_header_only(path: Path, shape: tuple[int, ...]) -> None:
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": shape})


def _inputs(root: Path) -> None:
    """The bad input files the catalogue names ({in} in an argument is this folder)."""
    root.mkdir(exist_ok=True)
    X = np.zeros((64, 4))
    for name, (idx, value) in {"big": ((3, 2), 1e300), "nan": ((1, 1), np.nan), "inf": ((2, 0), -np.inf)}.items():
        A = X.copy()
        A[idx] = value
        np.save(root / f"{name}.npy", A)
    I64 = np.zeros((64, 4), dtype=np.int64)
    I64[5, 1] = np.iinfo(np.int64).max
    np.save(root / "i64.npy", I64)
    I64[5, 1] = np.iinfo(np.int64).min
    np.save(root / "i64min.npy", I64)
    np.save(root / "f128.npy", np.zeros((64, 4), dtype=np.longdouble))
    np.save(root / "complex.npy", np.zeros((64, 4), dtype=complex))
    np.save(root / "shape.npy", np.zeros((32, 4)))
    np.save(root / "obj.npy", np.zeros((64, 4), dtype=object), allow_pickle=True)
    np.savez(root / "z.npz", X=X)
    (root / "empty.npy").write_bytes(b"")
    (root / "text.npy").write_text("not an array\n")
    (root / "folder.npy").mkdir(exist_ok=True)
    _npy_header_only(root / "huge.npy", (2 ** 40, 4))
    (root / "afile").write_text("a file, not a folder\n")
    os.mkfifo(root / "fifo.npy")


# (id, argv, exit code, a phrase the one line must contain)
CASES = [
    # resources: numerics caps and memory estimates, refused before any work
    ("exact-D-64000", CHECK + ["--numerics", "exact:64000"], 2, "--numerics"),
    ("exact-D-1e7", CHECK + ["--numerics", "exact:10000000"], 2, "--numerics"),
    ("fraction-D-huge", CHECK + ["--numerics", "fraction:99999"], 2, "--numerics"),
    ("symbolic-D-huge", CHECK + ["--numerics", "symbolic:99999"], 2, "--numerics"),
    ("mp-bits-1e9", CHECK + ["--numerics", "mp:1000000000"], 2, "--numerics"),
    ("mp-bits-0", CHECK + ["--numerics", "mp:0"], 2, "--numerics"),
    ("mp-bits-text", CHECK + ["--numerics", "mp:abc"], 2, "--numerics"),
    ("mp-no-bits", CHECK + ["--numerics", "mp"], 2, "--numerics"),
    ("numerics-unknown", CHECK + ["--numerics", "bogus"], 2, "--numerics"),
    ("numerics-fixed-q0", CHECK + ["--numerics", "fixed:q0.5"], 2, "--numerics"),
    ("d-20000", CHECK + ["--d", "20000", "--numerics", "float64"], 2, "--d"),
    ("N-1e12", CHECK + ["--N", "1000000000000"], 2, "--N"),
    ("N-1e5-exact", CHECK + ["--N", "100000", "--numerics", "exact"], 2, "--N"),
    ("max-memory-small", CHECK + ["--N", "2048", "--max-memory", "1M"], 2, "--N"),
    ("max-memory-text", CHECK + ["--max-memory", "lots"], 2, "--max-memory"),
    ("max-memory-zero", CHECK + ["--max-memory", "0"], 2, "--max-memory"),
    ("max-memory-share", CHECK + ["--max-memory", "250%"], 2, "--max-memory"),
    # parameter values
    ("N-fullwidth", CHECK + ["--N", "６４"], 2, "--N"),
    ("N-empty", CHECK + ["--N", ""], 2, "--N"),
    ("N-negative", CHECK + ["--N", "-5"], 2, "--N"),
    ("N-fraction", CHECK + ["--N", "1.5"], 2, "--N"),
    ("N-nan", CHECK + ["--N", "nan"], 2, "--N"),
    ("M-one", CHECK + ["--M", "1"], 2, "--M"),
    ("seed-negative", CHECK + ["--seed", "-1"], 2, "--seed"),
    ("min-bits-nan", CHECK + ["--numerics", "float64", "--min-bits", "nan"], 2, "--min-bits"),
    ("min-bits-inf", CHECK + ["--numerics", "float64", "--min-bits", "inf"], 2, "--min-bits"),
    ("min-bits-negative", CHECK + ["--numerics", "float64", "--min-bits", "-1"], 2, "--min-bits"),
    ("numerics-empty", CHECK + ["--numerics", ""], 2, "--numerics"),
    ("numerics-equals-empty", CHECK + ["--numerics="], 2, "--numerics"),
    ("claim-empty", ["check", ""], 2, "empty"),
    ("claim-unknown", ["check", "two_heads.nope"], 2, "two_heads.nope"),
    ("param-unknown", CHECK + ["--bogus", "3"], 2, "--bogus"),
    ("param-no-value", CHECK + ["--d"], 2, "--d"),
    # input files
    ("input-header-2^40", CHECK + ["--input-file", "{in}/huge.npy"], 2, "--input-file"),
    ("input-1e300-exact", CHECK + ["--input-file", "{in}/big.npy"], 2, "(3, 2)"),
    ("input-1e300-float64", CHECK + ["--input-file", "{in}/big.npy", "--numerics", "float64"], 2, "(3, 2)"),
    ("input-1e300-fixed", CHECK + ["--input-file", "{in}/big.npy", "--numerics", "fixed:q16.16"], 2, "(3, 2)"),
    ("input-int64-max-float64", CHECK + ["--input-file", "{in}/i64.npy", "--numerics", "float64"], 2, "(5, 1)"),
    ("input-int64-min-float64", CHECK + ["--input-file", "{in}/i64min.npy", "--numerics", "float64"], 2, "(5, 1)"),
    ("input-int64-max-exact", CHECK + ["--input-file", "{in}/i64.npy"], 2, "(5, 1)"),
    ("input-int64-max-mp", CHECK + ["--input-file", "{in}/i64.npy", "--numerics", "mp:32"], 2, "(5, 1)"),
    ("input-nan", CHECK + ["--input-file", "{in}/nan.npy"], 2, "non-finite"),
    ("input-inf", CHECK + ["--input-file", "{in}/inf.npy", "--numerics", "float64"], 2, "non-finite"),
    ("input-0-bytes", CHECK + ["--input-file", "{in}/empty.npy"], 2, "empty.npy"),
    ("input-npz", CHECK + ["--input-file", "{in}/z.npz"], 2, "z.npz"),
    ("input-float128", CHECK + ["--input-file", "{in}/f128.npy"], 2, "float128"),
    ("input-complex", CHECK + ["--input-file", "{in}/complex.npy"], 2, "complex"),
    ("input-object", CHECK + ["--input-file", "{in}/obj.npy"], 2, "obj.npy"),
    ("input-text", CHECK + ["--input-file", "{in}/text.npy"], 2, "text.npy"),
    ("input-shape", CHECK + ["--input-file", "{in}/shape.npy"], 2, "(32, 4)"),
    ("input-folder", CHECK + ["--input-file", "{in}/folder.npy"], 2, "folder"),
    ("input-missing", CHECK + ["--input-file", "{in}/missing.npy"], 2, "no such file"),
    ("input-empty-path", CHECK + ["--input-file", ""], 2, "--input-file"),
    # run
    ("run-N-1e12", ["run", "--N", "1000000000000", "--M", "64"], 2, "--N"),
    ("run-d-huge", ["run", "--N", "1024", "--M", "64", "--d", "100000000"], 2, "--N"),
    ("run-workers-32", ["run", "--N", "256", "--M", "64", "--workers", "32"], 2, "--workers"),
    ("run-workers-0", ["run", "--N", "256", "--M", "64", "--workers", "0"], 2, "--workers"),
    ("run-json-folder", ["run", "--N", "256", "--M", "64", "--json", "{in}"], 2, "folder"),
    ("run-json-proc", ["run", "--N", "256", "--M", "64", "--json", "/proc/attnsim.json"], 2, "/proc"),
    ("run-json-no-parent", ["run", "--N", "256", "--M", "64", "--json", "{in}/no/such/r.json"], 2, "--json"),
    ("run-json-empty", ["run", "--N", "256", "--M", "64", "--json", ""], 2, "--json"),
    ("run-scheduler-empty", ["run", "--N", "256", "--M", "64", "--scheduler", ""], 2, "--scheduler"),
    ("run-N-fullwidth", ["run", "--N", "２５６"], 2, "--N"),
    ("run-max-memory", ["run", "--N", "65536", "--M", "64", "--max-memory", "1M"], 2, "--N"),
    # precision
    ("prec-exp-bits-0", PREC + ["--exp-bits", "0"], 2, "--exp-bits"),
    ("prec-exp-bits-99", PREC + ["--exp-bits", "99"], 2, "--exp-bits"),
    ("prec-int-bits-0", PREC + ["--family", "fixed", "--int-bits", "0"], 2, "--int-bits"),
    ("prec-int-bits-60", PREC + ["--family", "fixed", "--int-bits", "60"], 2, "--int-bits"),
    ("prec-options", PREC + ["--options", "bogus"], 2, "--options"),
    ("prec-options-empty", PREC + ["--options", ""], 2, "--options"),
    ("prec-family", PREC + ["--family", "bogus"], 2, "--family"),
    ("prec-N-1e12", ["precision", "two_heads.lemma_3_1", "--N", "1000000000000", "--M", "8"], 2, "--N"),
    ("prec-N-fullwidth", ["precision", "two_heads.lemma_3_1", "--N", "６４", "--M", "8"], 2, "--N"),
    ("prec-N-text", ["precision", "two_heads.lemma_3_1", "--N", "a,b", "--M", "8"], 2, "--N"),
    ("prec-decode-format", PREC + ["--decode-format", "float:bogus"], 2, "--decode-format"),
    ("prec-blocks-format", PREC + ["--blocks-format", "mp:99999999"], 2, "--blocks-format"),
    ("prec-target", PREC + ["--target", "2^5"], 2, "--target"),
    ("prec-d-0", PREC + ["--d", "0"], 2, "--d"),
    # report: output folder, cache, workers, executor
    ("report-out-file", ["report", "--quick", "--out", "{in}/afile"], 2, "afile"),
    ("report-out-proc", ["report", "--quick", "--out", "/proc/attnsim-report"], 2, "/proc"),
    ("report-out-under-file", ["report", "--quick", "--out", "{in}/afile/sub"], 2, "afile"),
    ("report-out-empty", ["report", "--quick", "--out", ""], 2, "--out"),
    ("report-cache-file", ["report", "--quick", "--out", "{in}/rep", "--cache", "{in}/afile"], 2, "--cache"),
    ("report-workers-32", ["report", "--quick", "--out", "{in}/rep", "--workers", "32"], 2, "--workers"),
    ("report-scheduler", ["report", "--quick", "--out", "{in}/rep", "--scheduler", "bogus"], 2, "--scheduler"),
    ("report-scheduler-no-dask", ["report", "--quick", "--out", "{in}/rep", "--scheduler", "tcp://127.0.0.1:1"], 2,
     "--scheduler"),
    ("bench-json-folder", ["bench", "--quick", "--json", "{in}"], 2, "folder"),
    # the cost of each claim's own options, refused with the estimate before any work
    ("lemma_3_3-M-1e6", ["check", "two_heads.lemma_3_3", "--M", "1000000"], 2, "--M: this run would need"),
    ("lemma_3_3-jobs-1e12", ["check", "two_heads.lemma_3_3", "--jobs", "1000000000000"], 2, "--jobs: this run"),
    ("exact-4096-base-1e1000", CHECK + ["--numerics", "exact:4096:1e1000"], 2, "D·log2 z"),
    ("exact-64-base-1e1000", CHECK + ["--numerics", "exact:64:1e1000"], 2, "D·log2 z"),
    ("fraction-4096-base-40-digits", CHECK + ["--numerics", "fraction:4096:" + "7" * 40], 2, "D·log2 z"),
    ("exact-base-exponent-huge", CHECK + ["--numerics", "exact:64:1e1000000000"], 2, "--numerics"),
    ("mp-65536", CHECK + ["--numerics", "mp:65536"], 2, "--numerics: this run would take"),
    ("thm_4_1-seeds-1e9", ["check", "two_heads.thm_4_1", "--seeds", "1000000000"], 2, "--seeds: this run"),
    ("thm_1_1-Hp-1e12", ["check", "two_heads.thm_1_1", "--Hp", "1000000000000"], 2, "--Hp: this run"),
    ("alg_1-seeds-1e12", ["check", "anna.alg_1", "--seeds", "1000000000000"], 2, "--seeds: this run would take"),
    ("alg_1-m-1e9", ["check", "anna.alg_1", "--m", "1000000000"], 2, "--m: this run"),
    ("thm_5_2-modulus-1e12", ["check", "anna.thm_5_2", "--modulus", "1000000000000"], 2, "--modulus: this run"),
    ("lemma_b_4-q-1e12", ["check", "anna.lemma_b_4", "--q", "1000000000000"], 2, "--q: this run"),
    ("linear_forward-D-1e5", ["check", "tint.linear_forward", "--D", "100000"], 2, "--D: this run"),
    ("stacking-D-1e6", ["check", "tint.stacking", "--D", "1000000"], 2, "--D: this run"),
    ("fd-samples-1e12", ["check", "tint.rebuttal_fd_end_to_end", "--samples", "1000000000000"], 2, "--samples"),
    ("size-growth-steps-1e6", ["check", "tint.rebuttal_size_growth", "--steps", "1000000"], 2, "--steps: this run"),
    ("max-time-small", ["check", "anna.alg_1", "--max-time", "1"], 2, "--max-time changes it"),
    # domains and the options a claim does not take
    ("size-numerics", ["check", "tint.size", "--numerics", "exact"], 2, "--numerics"),
    ("size-n-sim-negative", ["check", "tint.size", "--n-sim", "-1"], 2, "--n-sim"),
    ("mlp-H-sim-zero", ["check", "tint.rebuttal_mlp_aux", "--H-sim", "0"], 2, "--H-sim"),
    ("size-growth-one-step", ["check", "tint.rebuttal_size_growth", "--steps", "1"], 2,
     "--steps: n_sim <= 2 layers and <= 1 steps give fewer than 3"),  # two points: no line to test (fuzzed)
    ("min-bits-exact", CHECK + ["--min-bits", "10"], 2, "--min-bits"),
    ("seed-2^63", CHECK + ["--seed", str(2 ** 63)], 2, "--seed"),
    ("input-fifo", CHECK + ["--input-file", "{in}/fifo.npy"], 2, "not a regular file"),
    ("prec-target-overflow", PREC + ["--target", "2^100000"], 2, "--target"),
    ("prec-target-complex", PREC + ["--target", "-2^0.5"], 2, "--target"),
    ("prec-target-zero-division", PREC + ["--target", "0^-1"], 2, "--target"),
    ("prec-blocks-format-exact", PREC + ["--blocks-format", "exact"], 2, "--blocks-format"),
    ("prec-scales-tiny", PREC + ["--scales", "1e-1000"], 2, "--scales"),
    ("bench-engine", ["bench", "--quick", "--engine", "bogus"], 2, "--engine"),
    ("bench-N-negative", ["bench", "--quick", "--N", "-5"], 2, "--N"),
    ("bench-repeats-1e12", ["bench", "--quick", "--repeats", "1000000000000"], 2, "--repeats"),
    ("teeth-seed-negative", ["teeth", "--seed", "-1"], 2, "--seed"),
    ("bench-N-without-torch", ["bench", "--quick", "--N", "64"], 2, "--N"),
    ("bench-d-without-torch", ["bench", "--quick", "--d", "8"], 2, "--d"),
    ("check-empty-claim", ["check", ""], 2, "CLAIM"),
    # precision: lists, duplicates, options that do not belong to the family or study, costs
    ("prec-N-twice", ["precision", "two_heads.lemma_3_1", "--N", "64,64", "--M", "8"], 2, "--N: 64 given more"),
    ("prec-N-empty-entry", ["precision", "two_heads.lemma_3_1", "--N", "64,,128", "--M", "8"], 2, "--N: "),
    ("prec-constructions-twice", PREC + ["--constructions", "paper,paper"], 2, "--constructions: paper given"),
    ("prec-decode-format-exact", PREC + ["--decode-format", "exact"], 2, "--decode-format: "),
    ("prec-decode-is-check-vocabulary", PREC + ["--decode", "exact"], 2, "--decode"),
    ("prec-sample-blocks-1e12", PREC + ["--sample-blocks", "1000000000000"], 2, "--sample-blocks: "),
    ("prec-scale-N-without-scales", PREC + ["--scale-N", "1000000000000"], 2, "--scale-N: "),
    ("prec-scale-N-1e12", PREC + ["--scales", "1", "--scale-N", "1000000000000"], 2, "--scale-N: this run"),
    ("prec-int-bits-float", PREC + ["--int-bits", "8"], 2, "--int-bits: "),
    ("prec-exp-bits-fixed", PREC + ["--family", "fixed", "--exp-bits", "8"], 2, "--exp-bits: "),
    ("prec-M-1e12", PREC + ["--M", "1000000000000"], 2, "--M: this run"),
    ("prec-N-long-list", ["precision", "two_heads.lemma_3_1", "--M", "8", "--N",
                          ",".join(str(2 ** k) for k in range(6, 18))], 2, "--N: this run would take"),
    ("prec-window-not-thm-5-1", PREC + ["--window", "3"], 2, "--window: "),
    ("prec-M-garbage", PREC + ["--M", "abc"], 2, "--M: "),
    # claim options without a domain or a cost before
    ("cor_b_9-k-1e12", ["check", "anna.cor_b_9", "--k", "1000000000000"], 2, "--k: "),
    ("khop-k-1e12", ["check", "anna.khop", "--k", "1000000000000"], 2, "--k: "),
    ("khop-k-2000", ["check", "anna.khop", "--N", "1024", "--k", "2000"], 2, "--k: "),
    ("sgd_step-softmax-eps-huge", ["check", "tint.sgd_step", "--softmax-eps", "1e300"], 2, "--softmax-eps: "),
    ("sgd_step-softmax-eps-1e12", ["check", "tint.sgd_step", "--softmax-eps", "1e12"], 2, "--softmax-eps: "),
    ("thm_4_4-modulus-1e12", ["check", "anna.thm_4_4", "--modulus", "1000000000000"], 2, "--modulus: "),
    ("sgd_step-fd-scale-1e12", ["check", "tint.sgd_step", "--fd-scale", "1000000000000"], 2, "--fd-scale: "),
    # the LSH's tables grow as r falls: stopped at the 9.8 GiB memory limit before the cost model read r
    ("thm_4_2-r-1e-6", ["check", "anna.thm_4_2", "--r", "1e-6"], 2, "--r: this run would need about"),
    # tanh(1) as a 24-bit rational in exact numerics: the step took 7 GB within 90 s before this refusal
    ("sgd_step-soft-gates-exact", ["check", "tint.sgd_step", "--gate-scale", "1"], 2, "--gate-scale: "),
    # float64 rounding, about 2^-53 / eps, drowns the O(eps) error: the slope was failed at eps = 1e-12 and 3e-7
    ("thm_2_5-eps-below-float64", ["check", "tint.thm_2_5", "--eps", "1e-12"], 2, "--eps: "),
    ("def_ema-mv-1e12", ["check", "anna.def_ema", "--mv", "1000000000000"], 2, "--mv: "),
    ("thm_4_1-heads-scale-1e12", ["check", "anna.thm_4_1", "--heads-scale", "1e12"], 2, "--heads-scale: "),
    ("thm_4_4-heads-scale-1e12", ["check", "anna.thm_4_4", "--heads-scale", "1e12"], 2, "--heads-scale: "),
    ("lemma_b_5-block-1e12", ["check", "anna.lemma_b_5", "--block", "1000000000000"], 2, "--block: "),
    ("two_heads-thm_4_1-eps-100", ["check", "two_heads.thm_4_1", "--eps", "100"], 2, "--eps: "),
    ("two_heads-lower_bound-eps-2", ["check", "two_heads.lower_bound", "--eps", "2"], 2, "--eps: "),
    ("linear_forward-n-train-over-n", ["check", "tint.linear_forward", "--n", "5", "--n-train", "6"], 2,
     "--n-train: "),
    ("thm_5_1-window-1e12", ["check", "two_heads.thm_5_1", "--window", "1000000000000"], 2, "--window: "),
    ("lemma_3_3-H-1e12", ["check", "two_heads.lemma_3_3", "--H", "1000000000000"], 2, "--H: "),
    ("anna-P-1e12", ["check", "anna.thm_4_1", "--P", "1000000000000"], 2, "--P: "),
    ("prove-rlimit-huge", ["prove", "--rlimit", "1000000000000"], 2, "--rlimit: "),
    ("prove-rlimit-zero", ["prove", "--rlimit", "0"], 2, "--rlimit: "),
    ("prove-rlimit-garbage", ["prove", "--rlimit", "abc"], 2, "--rlimit: "),
    ("tint-size-aux-missing", ["tint-size", "--n-sim", "3"], 2, "--aux: "),
    ("report-audit-garbage", ["report", "--quick", "--out", "{in}/rep", "--audit", "abc"], 2, "--audit: "),
]


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


def _descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fault-inputs")
    _inputs(root)
    all_checkers()  # imports every checker once: the rows time the refusals, not the imports
    return root


def test_catalogue_is_large_enough():
    assert len(CASES) >= 60 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("argv, code, phrase", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fault(argv: list[str], code: int, phrase: str, inputs: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("ATTNSIM_MAX_MEMORY", "50%")
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{in}", str(inputs)) for a in argv]
    before_inputs, before_cwd, before_procs = _tree(inputs), _tree(tmp_path), _descendants()
    monkeypatch.setattr(sys, "argv", ["attnsim", *argv])
    start = time.process_time()  # CPU seconds: the machine may be shared; a refusal does no work
    with pytest.raises(SystemExit) as exc:
        main()
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert exc.value.code == code, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and phrase in lines[0], err
    assert "Traceback" not in err
    assert time.process_time() - start < 5, "a refusal must come before any work"
    assert _descendants() <= before_procs
    assert _tree(inputs) == before_inputs and _tree(tmp_path) == before_cwd


