"""The soup's arithmetic on tiny checkpoints: every checkpoint counts, one listed twice weighs
twice, each tensor keeps its precision, and every checkpoint is checked against the first."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("the soup needs the [train] extra (torch)", allow_module_level=True)

import torch  # noqa: E402
from torch import nn  # noqa: E402

from vision.train.soup import average_checkpoints, soup_detector  # noqa: E402


def _save(path: Path, fill: float, *, width: int = 2, half: bool = False) -> Path:
    """A checkpoint of a tiny network whose every float weight is ``fill``."""
    model = nn.Sequential(nn.Linear(2, width), nn.BatchNorm1d(width))
    with torch.no_grad():
        for tensor in model.state_dict().values():
            if tensor.is_floating_point():
                tensor.fill_(fill)
    if half:
        model = model.half()
    torch.save({"model": model, "ema": model, "optimizer": {"lr": 1}, "epoch": 3}, path)
    return path


def _weights(soup: dict) -> dict[str, torch.Tensor]:
    return {k: v for k, v in soup["model"].state_dict().items() if v.is_floating_point()}


def test_every_checkpoint_counts_and_one_listed_twice_weighs_twice(tmp_path: Path):
    a, b, c = (_save(tmp_path / f"{n}.pt", f) for n, f in (("a", 0.0), ("b", 3.0), ("c", 6.0)))
    for weight in _weights(average_checkpoints([a, b, c])).values():
        assert torch.allclose(weight, torch.full_like(weight, 3.0))  # (0 + 3 + 6) / 3
    for weight in _weights(average_checkpoints([a, c, c])).values():
        assert torch.allclose(weight, torch.full_like(weight, 4.0))  # (0 + 6 + 6) / 3
    soup = average_checkpoints([a, b])
    assert soup["ema"] is None and soup["optimizer"] is None  # no stale copy of one part
    assert soup["epoch"] == 3
    first = torch.load(a, weights_only=False)["model"]  # the parts on disk stay as they were
    assert all(float(w.abs().max()) == 0.0 for w in _weights({"model": first}).values())


def test_a_half_precision_soup_stays_half_and_is_averaged_exactly(tmp_path: Path):
    # 2049 + 2050 is 4099 in float32 but 4100 in float16 (steps of 2 above 2048): 2049.5 -> 2050
    a = _save(tmp_path / "a.pt", 2048.0, half=True)
    b = _save(tmp_path / "b.pt", 2050.0, half=True)
    c = _save(tmp_path / "c.pt", 2050.0, half=True)
    for weight in _weights(average_checkpoints([a, b, c])).values():
        assert weight.dtype == torch.float16
        assert torch.all(weight == 2050.0)  # (2048 + 2 * 2050) / 3 = 2049.33, stored as 2050


def test_each_later_checkpoint_is_checked_against_the_first(tmp_path: Path):
    a, b = _save(tmp_path / "a.pt", 1.0), _save(tmp_path / "b.pt", 2.0)
    wide = _save(tmp_path / "wide.pt", 1.0, width=3)
    with pytest.raises(ValueError, match=r"wide.pt is not the architecture of .*a.pt"):
        average_checkpoints([a, b, wide])
    with pytest.raises(
        ValueError, match=r"expected a detector checkpoint .*gone.pt \(no such file"
    ):
        average_checkpoints([a, tmp_path / "gone.pt"])


def test_soup_detector_writes_the_soup_and_names_each_part_once(tmp_path: Path, capsys):
    a, b = _save(tmp_path / "a.pt", 0.0), _save(tmp_path / "b.pt", 3.0)
    out = soup_detector([a, b, b], tmp_path / "out" / "soup.pt")
    assert out == tmp_path / "out" / "soup.pt"
    assert [p.name for p in out.parent.iterdir()] == ["soup.pt"]
    saved = torch.load(out, weights_only=False)
    for weight in _weights(saved).values():
        assert torch.allclose(weight, torch.full_like(weight, 2.0))
    said = capsys.readouterr().out
    assert f"detector soup of 3 checkpoints: {a}, {b} (x2) -> {out}" in said
