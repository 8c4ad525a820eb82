"""TinT tests: torch, where the independent references use it, runs on one thread (the suite shares the CPU)."""

try:
    import torch
except ImportError:  # the torch-referenced tests skip or check the partial record
    torch = None
else:
    torch.set_num_threads(1)
