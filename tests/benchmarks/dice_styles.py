"""Dice styles the benchmarks render: the fine-tuning benchmark's new dice and the unseen
styles of ``bench_styles.py``. Only ``white`` lies inside the synthetic generator's range."""

from __future__ import annotations


def _style(
    body: tuple[int, int, int],
    pip: tuple[int, int, int],
    kind: str = "pips",
    radius: float = 0.1,
    opacity: float = 1.0,
    corner: float = 0.2,
    gloss: float = 0.3,
    edge_tone: float = 1.0,
) -> dict:
    return {
        "body": [float(v) for v in body],  # BGR
        "pip": [float(v) for v in pip],
        "emblem": [float(v) for v in pip],
        "kind": kind,
        "opacity": opacity,
        "pip_radius": radius,
        "corner": corner,
        "gloss": gloss,
        "edge_tone": edge_tone,
    }


# BGR colours. Training draws bodies from LIGHT_BODIES/DARK_BODIES in vision/synth/scene.py (no
# yellow or orange), pips from a few dark or light colours, pip radius 0.075-0.115 of a face and
# corner rounding 0.08-0.26: every style but ``white`` falls outside some of that.
STYLES: dict[str, dict] = {
    "white": _style((240, 240, 240), (20, 20, 20), radius=0.1, corner=0.15),  # the baseline
    "small-pips": _style((235, 235, 235), (60, 60, 60), radius=0.05, corner=0.15, gloss=0.2),
    "pastel": _style((230, 190, 240), (250, 250, 250)),  # pale pink, white pips
    "black-gold": _style((20, 20, 20), (40, 160, 200), radius=0.06, corner=0.1, gloss=0.5),
    "grey-on-grey": _style((150, 150, 150), (90, 90, 90), gloss=0.2),
    # yellow dice, big maroon pips, very round corners, glossy
    "yellow": _style(
        (40, 205, 245), (40, 20, 120), radius=0.13, corner=0.3, gloss=0.5, edge_tone=0.9
    ),
    # translucent orange dice with small white pips
    "orange-glass": _style(
        (20, 110, 240), (245, 245, 245), radius=0.065, opacity=0.6, corner=0.12, gloss=0.4
    ),
    # red dice with white numerals instead of pips (8% of training styles have numerals)
    "red-numerals": _style((40, 40, 190), (245, 245, 245), kind="numeral"),
    # lilac dice with white pips: little contrast between pips and body
    "lilac": _style((200, 140, 190), (250, 250, 250)),
}
