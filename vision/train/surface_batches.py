"""How :mod:`vision.train.surface` feeds its net: augmented batches made in worker processes,
the torch device named on the command line, and a one-cycle learning rate that can follow the
clock (a time budget) as well as the steps.

Example:
    >>> torch_device("0"), torch_device("cpu"), torch_device("cuda:1")
    ('cuda:0', 'cpu', 'cuda:1')
    >>> round(one_cycle(0.0, 3e-3)[0], 6), one_cycle(0.15, 3e-3)[0], one_cycle(1.0, 3e-3)[0] < 1e-6
    (0.00012, 0.003, True)
"""

from __future__ import annotations

import math
import multiprocessing
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from vision.train.surface_data import augmented_batch

__all__ = ["BatchMaker", "one_cycle", "torch_device"]

PCT_START, DIV_FACTOR, FINAL_DIV = 0.15, 25.0, 1e4
"""The one-cycle shape of torch's ``OneCycleLR`` as the trainer uses it (its defaults)."""
BETAS = (0.95, 0.85)
"""The first Adam beta at the cycle's ends and at its peak (``OneCycleLR``'s momentum cycle)."""


def torch_device(name: str) -> str:
    """A device name as torch takes it: ``"cpu"``, or a CUDA device given as ``"0"``,
    ``"cuda"`` or ``"cuda:1"``.

    Raises:
        ValueError: anything else.
    """
    name = name.strip().lower()
    if name == "cpu":
        return "cpu"
    if name.isdigit():
        return f"cuda:{name}"
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        return name if ":" in name else "cuda:0"
    raise ValueError(f"expected a device 'cpu', 'cuda', 'cuda:N' or a GPU number, got {name!r}")


def one_cycle(progress: float, max_lr: float) -> tuple[float, float]:
    """(learning rate, Adam's first beta) at ``progress`` (0 to 1) of a one-cycle schedule:
    cosine up from ``max_lr / 25`` to ``max_lr`` over the first 15%, then cosine down to
    ``max_lr / 25e4``; the beta moves the other way (0.95 -> 0.85 -> 0.95). The shape of torch's
    ``OneCycleLR``, here as a function of a share, so a time budget can drive it."""
    progress = min(max(progress, 0.0), 1.0)
    start, end = max_lr / DIV_FACTOR, max_lr / DIV_FACTOR / FINAL_DIV
    if progress < PCT_START:
        share, lo_hi, beta = progress / PCT_START, (start, max_lr), BETAS
    else:
        share = (progress - PCT_START) / (1 - PCT_START)
        lo_hi, beta = (max_lr, end), BETAS[::-1]
    cos = (1 + math.cos(math.pi * share)) / 2  # 1 -> 0
    return lo_hi[1] + (lo_hi[0] - lo_hi[1]) * cos, beta[1] + (beta[0] - beta[1]) * cos


_FORKED: BatchMaker | None = None
"""The maker whose workers are running: they fork with it and make its batches."""


def _make(task: tuple[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    seed, idx = task
    assert _FORKED is not None  # set before the workers fork
    return _FORKED.batch(np.random.default_rng(seed), idx)


class BatchMaker:
    """Augmented batches (:func:`~vision.train.surface_data.augmented_batch`) made by
    ``workers`` forked processes, a few batches ahead of the net: each batch has its own seed,
    so the batches are the same with any number of workers. Use it as a context manager.

    Each batch is ``make`` of its photos; ``workers`` 0 makes them in this process, one at a
    time, from the trainer's own generator (the batches of the trainer before the workers came).
    """

    def __init__(
        self,
        images: np.ndarray,
        masks: np.ndarray,
        input_size: int,
        layers: int,
        photometric: str,
        workers: int = 0,
        make: Any = augmented_batch,
    ) -> None:
        if workers < 0:
            raise ValueError(f"expected 0 or more workers, got {workers}")
        self.workers = workers
        self._args = (input_size, layers, photometric)
        self._pool: Any = None
        self._images, self._masks, self._make = images, masks, make
        if workers:
            global _FORKED
            _FORKED = self
            self._pool = multiprocessing.get_context("fork").Pool(workers)

    def __enter__(self) -> BatchMaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers (nothing when there are none)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
        global _FORKED
        if _FORKED is self:
            _FORKED = None

    def batch(
        self, rng: np.random.Generator, idx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(inputs, targets, known) of the photos ``idx``, augmented with ``rng``."""
        return self._make(rng, self._images[idx], self._masks[idx], *self._args)

    def epoch(
        self, rng: np.random.Generator, order: Sequence[int] | np.ndarray, batch: int
    ) -> Iterator[tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """(indices, (inputs, targets, known)) of each batch of ``order``, in order."""
        chunks = [np.asarray(order[k : k + batch]) for k in range(0, len(order), batch)]
        if not self._pool:
            for idx in chunks:
                yield idx, self.batch(rng, idx)
            return
        seeds = rng.integers(0, 2**63 - 1, size=len(chunks))
        tasks = iter(zip(seeds.tolist(), chunks, strict=True))
        pending: deque[tuple[np.ndarray, Any]] = deque()
        for _ in range(2 * self.workers):
            self._submit(tasks, pending)
        while pending:
            idx, result = pending.popleft()
            self._submit(tasks, pending)
            yield idx, result.get()

    def _submit(self, tasks: Iterator[tuple[int, np.ndarray]], pending: deque) -> None:
        task = next(tasks, None)
        if task is not None:
            pending.append((task[1], self._pool.apply_async(_make, (task,))))
