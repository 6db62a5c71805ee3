"""Fixtures of the vision tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest


@pytest.fixture
def table_settings(tmp_path, monkeypatch) -> None:
    """No user calibration, data folder or table setting leaks into a test: the data folder is
    the test's own and every table setting is at its default."""
    from vision.table import TableSettings

    for name in TableSettings.model_fields:
        monkeypatch.delenv(f"DICECAM_{name.upper()}", raising=False)
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def one_die_scene() -> Callable[..., dict]:
    """Makes a synthetic scene of one die thrown flat on a plain table, seen from straight
    above under even light, sharp: ``one_die_scene(seed, body=..., pip=..., table_color=...,
    exposure=...)`` (BGR colours) for :func:`vision.synth.render_scene`."""
    from vision.synth import sample_scene

    def make(
        seed: int,
        *,
        body: list[float],
        pip: list[float],
        table_color: list[float],
        exposure: float = 1.0,
    ) -> dict:
        scene = sample_scene(np.random.default_rng(seed), 320, 320)
        scene["n_dice"] = 1
        scene["dice_sizes"] = [1.0]
        scene["dice_styles"] = [
            {
                "body": body,
                "pip": pip,
                "emblem": pip,
                "kind": "pips",
                "opacity": 1.0,
                "pip_radius": 0.1,
                "corner": 0.15,
                "gloss": 0.0,
            }
        ]
        scene["surface"].update(
            kind="table",
            interior=None,
            rim=None,
            table_style="white",
            table_color=table_color,
            table=[20.0, 20.0],
        )
        scene["surface"].pop("board", None)
        scene["throw"].update(origin=[0.0, 0.0], velocity=[5.0, 0.0], catch_step=None, lean=False)
        scene["camera"].update(
            elevation_deg=90.0, zoom=1.0, target_jitter=[0.0, 0.0], roll_deg=0.0, min_distance=6.0
        )
        scene["light"].update(
            shadow=0.25, ambient=0.7, diffuse=0.3, gradient=0.0, spot=0.0, exposure=exposure
        )
        scene["post"].update(
            motion_blur_px=0.0, defocus_sigma=0.0, noise_sigma=1.0, jpeg_quality=92
        )
        return scene

    return make
