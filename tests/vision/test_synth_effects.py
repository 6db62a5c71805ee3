"""Camera effects of synthetic photos (:mod:`vision.synth.effects`) on hand-made images:
exposure, white balance, vignette, blur and noise as the scene's parameters say, and a moving
die smeared along its own motion only."""

from __future__ import annotations

import math

import numpy as np

from vision.synth.camera import look_at
from vision.synth.effects import motion_blur_die, post_process
from vision.synth.labels import die_box
from vision.synth.physics import DiePose
from vision.synth.render import Canvas

W, H = 200, 160
CAM = look_at(np.array([0.0, 0.0, 20.0]), np.zeros(3), 40.0, W, H)


def _scene(seed: int = 3, **changes: float | list[float]) -> dict:
    light = {"gradient": 0.0, "gradient_angle_deg": 0.0, "spot": 0.0, "spot_xy": [0.5, 0.5]}
    light |= {"exposure": 1.0, "vignette": 0.0}
    post = {"motion_blur_px": 0.0, "motion_angle_deg": 0.0, "defocus_sigma": 0.0}
    post |= {"noise_sigma": 0.0, "white_balance": [1.0, 1.0, 1.0]}
    for key, value in changes.items():
        (light if key in light else post)[key] = value
    return {"light": light, "post": post, "texture_seed": seed}


def _flat(value: float) -> np.ndarray:
    return np.full((H, W, 3), value, np.float32)


def test_exposure_and_white_balance_scale_each_channel():
    assert (post_process(_flat(100), _scene(), CAM) == 100).all()
    assert (post_process(_flat(100), _scene(exposure=1.5), CAM) == 150).all()
    out = post_process(_flat(100), _scene(white_balance=[1.0, 0.8, 0.5]), CAM)
    assert (out[..., 0] == 100).all() and (out[..., 1] == 80).all() and (out[..., 2] == 50).all()


def test_a_vignette_darkens_the_corners():
    out = post_process(_flat(100), _scene(vignette=0.4), CAM).astype(int)
    assert out[H // 2, W // 2].min() >= 99
    assert out[0, 0].max() <= 82 and out[-1, -1].max() <= 82


def test_defocus_softens_an_edge_and_motion_blur_smears_along_its_angle():
    step = _flat(0)
    step[:, W // 2 :] = 200
    assert set(np.unique(post_process(step, _scene(), CAM))) == {0, 200}
    soft = post_process(step, _scene(defocus_sigma=1.5), CAM)
    assert 20 < soft[H // 2, W // 2 - 1, 0] < 180 and 20 < soft[H // 2, W // 2, 0] < 180
    dot = _flat(0)
    dot[80, 100] = 255
    across = post_process(dot, _scene(motion_blur_px=7.0, motion_angle_deg=0.0), CAM)[..., 0]
    assert across[80, 97] > 0 and across[80, 103] > 0 and across[77, 100] == across[83, 100] == 0
    down = post_process(dot, _scene(motion_blur_px=7.0, motion_angle_deg=90.0), CAM)[..., 0]
    assert down[77, 100] > 0 and down[83, 100] > 0 and down[80, 97] == down[80, 103] == 0


def test_sensor_noise_is_as_strong_as_its_sigma_repeatable_and_never_wraps():
    grey = post_process(_flat(128), _scene(noise_sigma=6.0), CAM).astype(float)
    assert abs(grey.mean() - 128) < 1.0
    assert 4.0 < grey.std() < 8.5
    again = post_process(_flat(128), _scene(noise_sigma=6.0), CAM)
    assert (again == grey).all()  # the same scene, the same photo
    assert (post_process(_flat(128), _scene(4, noise_sigma=6.0), CAM) != grey).any()
    white = post_process(_flat(250), _scene(noise_sigma=12.0), CAM)
    assert white.min() > 190 and (white == 255).any()  # clipped at white, not wrapped to black
    black = post_process(_flat(3), _scene(noise_sigma=12.0), CAM)
    assert black.max() < 60 and (black == 0).any()


def _two_dice(velocity: tuple[float, float]) -> tuple[Canvas, DiePose, list[list[int]]]:
    """Die 1 at the centre moving at ``velocity`` (world units/s), die 2 still, well above it."""
    moving = DiePose(np.array([0.0, 0, 0.5]), np.eye(3), 1.0, True, True, np.r_[velocity, 0.0])
    still = DiePose(np.array([0.0, 2.5, 0.5]), np.eye(3), 1.0, True, False)
    canvas = Canvas.new(CAM)
    boxes = []
    for die_id, pose, value in ((1, moving, 200.0), (2, still, 100.0)):
        x1, y1, x2, y2 = (int(round(v)) for v in die_box(CAM, pose))
        canvas.img[y1:y2, x1:x2] = value
        canvas.ids[y1:y2, x1:x2] = die_id
        boxes.append([x1, y1, x2, y2])
    return canvas, moving, boxes


def test_a_moving_die_is_smeared_along_its_motion_during_the_shutter():
    v = 30.0 / math.sqrt(2)  # 1.5 die edges in 0.05 s: about 21 px, up and right in the photo
    canvas, moving, (box, still_box) = _two_dice((v, v))
    before = canvas.img.copy()
    motion_blur_die(canvas, moving, 1, 0.05)
    img = canvas.img[..., 0]
    x1, y1, x2, y2 = box
    assert img[y1 - 4, x2 + 3] > 20  # ahead of it and behind it along the motion
    assert img[y2 + 3, x1 - 4] > 20
    assert img[y2 + 3, x2 + 3] < 1 and img[y1 - 4, x1 - 4] < 1  # not across it
    assert img.max() <= 200.0 + 1e-3  # smeared, not brightened
    sx1, sy1, sx2, sy2 = still_box
    assert (canvas.img[sy1:sy2, sx1:sx2] == before[sy1:sy2, sx1:sx2]).all()  # the other die
    slow, moving, _ = _two_dice((1.0, 0.0))  # under a pixel in the shutter time: left sharp
    before = slow.img.copy()
    motion_blur_die(slow, moving, 1, 0.05)
    assert (slow.img == before).all()
