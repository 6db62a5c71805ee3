"""Where the dice land: a pybullet simulation in DIRECT mode (collision only, no rendering).

Units: one unit is the edge of a standard die (about 16 mm). The table top is the plane z = 0,
the floor lies ``table_height`` below it. A tray (or box lid) sits on the table: its interior is
the playing surface, its rims are static boxes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["DiePose", "Surface", "simulate"]

GRAVITY = 9.81 / 0.016  # units (die edges) per second squared
STEP = 1.0 / 120.0
FLOOR = 1000.0
"""Half extent of the floor, in units: far past where any die lands."""
CLEARANCE = 0.02
"""Least gap between a thrown die and any other body when it is created, in units."""
MOVING = 3.0
"""Linear speed (units per second) above which a die is moving: it cannot be at rest."""
GROUND_TOL = 0.05
"""How far (units) a contact or a die's lowest corner may be above the table top or the floor
and still lie on it."""
SUPPORT_NZ = 0.7
"""Least upward part of a contact's normal for it to hold a die up (about 45 degrees)."""


@dataclass(slots=True)
class Surface:
    """The playing surface: a table top, or a tray/box interior standing on a table.

    ``table`` and ``interior`` are half extents (x, y) centred at the origin; ``rim`` is
    (height, thickness) for trays and boxes, None for a bare table or board.
    """

    kind: str
    table: tuple[float, float]
    table_height: float
    interior: tuple[float, float] | None = None
    rim: tuple[float, float] | None = None

    @property
    def play(self) -> tuple[float, float]:
        """Half extents of the playing surface (tray interior or table top)."""
        return self.interior if self.interior is not None else self.table

    def rim_boxes(self) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
        """(centre, half extents) of each rim box, split in segments about 2 units long."""
        if self.interior is None or self.rim is None:
            return []
        ix, iy = self.interior
        h, t = self.rim
        boxes = []
        for side in (-1, 1):
            n = max(1, int(math.ceil((2 * ix + 2 * t) / 2.0)))
            seg = (2 * ix + 2 * t) / n
            for k in range(n):
                c = -ix - t + seg * (k + 0.5)
                boxes.append(((c, side * (iy + t / 2), h / 2), (seg / 2, t / 2, h / 2)))
            n = max(1, int(math.ceil(2 * iy / 2.0)))
            seg = 2 * iy / n
            for k in range(n):
                c = -iy + seg * (k + 0.5)
                boxes.append(((side * (ix + t / 2), c, h / 2), (t / 2, seg / 2, h / 2)))
        return boxes


@dataclass(slots=True)
class DiePose:
    """One die after the simulation: centre, rotation (3x3, local -> world), edge length.

    ``in_contact``: it touches a body (the table, the floor, a rim, a die) and is not
    ``moving``, or it moves on the table top or the floor. A die moving past a rim or the
    table's edge, or touching only other dice in flight, is in the air.
    """

    position: np.ndarray
    rotation: np.ndarray
    size: float
    in_contact: bool
    moving: bool
    velocity: np.ndarray | None = None


def _quat_to_matrix(q: tuple[float, float, float, float]) -> np.ndarray:
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _axis_angle_quat(axis: np.ndarray, angle: float) -> list[float]:
    axis = axis / np.linalg.norm(axis)
    s = math.sin(angle / 2)
    return [float(axis[0] * s), float(axis[1] * s), float(axis[2] * s), math.cos(angle / 2)]


def _quat_mul(a: list[float], b: list[float]) -> list[float]:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]


def _cube_turns() -> list[list[float]]:
    """Quaternions that bring each face of a cube to the top (then any quarter turn about z)."""
    x, y = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    tops = [
        [0.0, 0.0, 0.0, 1.0],
        _axis_angle_quat(x, math.pi / 2),
        _axis_angle_quat(x, -math.pi / 2),
        _axis_angle_quat(y, math.pi / 2),
        _axis_angle_quat(y, -math.pi / 2),
        _axis_angle_quat(x, math.pi),
    ]
    return tops


_CUBE_TURNS = _cube_turns()


_CLIENT: list[int] = []


def _pybullet():
    """Import pybullet without the build-time banner it prints on stderr (from C, at import)."""
    import contextlib
    import ctypes
    import os
    import sys

    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        import pybullet
    finally:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).fflush(None)
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    return pybullet


def _client() -> int:
    """One DIRECT physics client per process, reset before each throw."""
    p = _pybullet()
    if not _CLIENT or not p.isConnected(_CLIENT[0]):
        _CLIENT[:] = [p.connect(p.DIRECT)]
    return _CLIENT[0]


def simulate(
    surface: Surface,
    sizes: list[float],
    throw: dict,
    seed: int,
) -> list[DiePose]:
    """Throw dice of the given edge lengths and return where they are when the roll is captured.

    ``throw`` holds ``origin`` (x, y), ``velocity`` (vx, vy), ``spread``, ``spin``, ``height``,
    ``catch_step`` (stop early while dice fly; None to let them settle) and ``lean``
    (place one extra die leaning on a neighbour or a rim; the last size is that die).
    """
    p = _pybullet()
    rng = np.random.default_rng(seed)
    c = _client()
    p.resetSimulation(physicsClientId=c)
    try:
        p.setGravity(0, 0, -GRAVITY, physicsClientId=c)
        p.setTimeStep(STEP, physicsClientId=c)
        p.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=c)
        tx, ty = surface.table
        slab = p.createCollisionShape(p.GEOM_BOX, halfExtents=[tx, ty, 1.0], physicsClientId=c)
        p.createMultiBody(0, slab, basePosition=[0, 0, -1.0], physicsClientId=c)
        # a box, not a plane: dice sank about 0.4 into pybullet's plane and never came to rest
        floor = p.createCollisionShape(
            p.GEOM_BOX, halfExtents=[FLOOR, FLOOR, 1.0], physicsClientId=c
        )
        below = [0, 0, -surface.table_height - 1.0]
        p.createMultiBody(0, floor, basePosition=below, physicsClientId=c)
        statics = []
        for centre, half in surface.rim_boxes():
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=list(half), physicsClientId=c)
            statics.append(
                p.createMultiBody(0, shape, basePosition=list(centre), physicsClientId=c)
            )
        for b in [0, 1, *statics]:
            p.changeDynamics(b, -1, lateralFriction=0.6, restitution=0.35, physicsClientId=c)

        n_throw = len(sizes) - (1 if throw.get("lean") else 0)
        bodies: list[int] = []
        ox, oy = throw["origin"]
        vx, vy = throw["velocity"]
        spread = throw["spread"]
        for i in range(n_throw):
            s = sizes[i]
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[s / 2] * 3, physicsClientId=c)
            q = rng.normal(size=4)
            q /= np.linalg.norm(q)
            b = p.createMultiBody(0.01 * s**3, shape, baseOrientation=q.tolist(), physicsClientId=c)
            _place_clear(p, c, rng, b, q.tolist(), (ox, oy, spread, throw["height"] + 0.78 * i))
            p.changeDynamics(
                b,
                -1,
                lateralFriction=0.5,
                restitution=0.3,
                rollingFriction=0.001,
                spinningFriction=0.001,
                physicsClientId=c,
            )
            v = [vx + rng.normal(0, 6), vy + rng.normal(0, 6), rng.uniform(-20, 0)]
            w = (rng.normal(size=3) * throw["spin"]).tolist()
            p.resetBaseVelocity(b, v, w, physicsClientId=c)
            bodies.append(b)

        def settle(max_steps: int, stop_at: int | None = None) -> None:
            for k in range(max_steps):
                if stop_at is not None and k >= stop_at:
                    return
                p.stepSimulation(physicsClientId=c)
                if stop_at is None and k % 10 == 9 and k > 30:
                    still = True
                    for b in bodies:
                        lin, ang = p.getBaseVelocity(b, physicsClientId=c)
                        if max(abs(x) for x in lin) > 0.3 or max(abs(x) for x in ang) > 0.5:
                            still = False
                            break
                    if still:
                        return

        catch = throw.get("catch_step")
        settle(260, catch)
        if throw.get("lean") and catch is None:
            _add_leaning_die(p, c, rng, surface, sizes[-1], bodies, statics)
            settle(120)

        poses = []
        for b in bodies:
            pos, q = p.getBasePositionAndOrientation(b, physicsClientId=c)
            lin, _ = p.getBaseVelocity(b, physicsClientId=c)
            moving = float(np.linalg.norm(lin)) > MOVING
            contacts = p.getContactPoints(bodyA=b, physicsClientId=c)
            shape = p.getCollisionShapeData(b, -1, physicsClientId=c)[0]
            rot = _quat_to_matrix(q)
            on_fixed = [pt for pt in contacts if pt[2] not in bodies]
            in_contact = bool(contacts) and not moving
            if on_fixed and moving:  # still on the table top or the floor, or glancing off a rim
                in_contact = _lies(surface, pos, rot, float(shape[3][0]), on_fixed)
            poses.append(
                DiePose(
                    position=np.array(pos, dtype=np.float64),
                    rotation=rot,
                    size=float(shape[3][0]),
                    in_contact=in_contact,
                    moving=moving,
                    velocity=np.array(lin, dtype=np.float64),
                )
            )
        return poses
    finally:
        p.resetSimulation(physicsClientId=c)


def _lies(surface: Surface, pos, rot: np.ndarray, size: float, contacts: list) -> bool:
    """Whether a die lies on the table top (under its centre) or else the floor: one of its
    ``contacts`` is on that face and holds it up, or its lowest corner is on or in that face
    (a die landing hard sinks in for a few steps; the solver finds its contacts a step late)."""
    tx, ty = surface.table
    over = abs(pos[0]) <= tx and abs(pos[1]) <= ty
    top = 0.0 if over else -surface.table_height
    ground = 0 if over else 1  # simulate makes the table slab body 0, the floor body 1
    if any(
        pt[2] == ground and abs(pt[6][2] - top) < GROUND_TOL and pt[7][2] > SUPPORT_NZ
        for pt in contacts
    ):
        return True
    return pos[2] - size / 2 * float(np.abs(rot[2]).sum()) < top + GROUND_TOL


def _place_clear(p, c, rng, body: int, q: list[float], at: tuple, tries: int = 40) -> None:
    """Put a thrown die in the hand: within ``spread`` of the origin sideways, 0-1 above its
    base height, clear of every body already there (a die created inside another is thrown
    out of it by the solver); past ``tries`` draws it goes up until it is clear."""
    ox, oy, spread, base = at
    others = range(body)

    def clear(pos: list[float]) -> bool:
        p.resetBasePositionAndOrientation(body, pos, q, physicsClientId=c)
        return not any(p.getClosestPoints(body, o, CLEARANCE, physicsClientId=c) for o in others)

    for _ in range(tries):
        pos = [
            ox + rng.uniform(-spread, spread),
            oy + rng.uniform(-spread, spread),
            base + rng.uniform(0, 1.0),
        ]
        if clear(pos):
            return
    while not clear(pos):
        pos[2] += 0.25


def _add_leaning_die(p, c, rng, surface: Surface, size: float, bodies, statics) -> None:
    """Prop one die on an edge against a resting die's side or a rim, then let physics decide."""
    px, py = surface.play
    candidates = []
    for b in bodies:
        pos, q = p.getBasePositionAndOrientation(b, physicsClientId=c)
        if abs(pos[0]) < px - 1.5 and abs(pos[1]) < py - 1.5 and 0 < pos[2] < 1.0:
            candidates.append((pos, q))
    use_rim = surface.rim is not None and (not candidates or rng.random() < 0.4)
    alpha = rng.uniform(math.radians(18), math.radians(40))
    ext = 0.5 * size * (math.cos(alpha) + math.sin(alpha))
    if use_rim:
        side = int(rng.integers(4))
        normal = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]][side], dtype=float)
        along = rng.uniform(-0.6, 0.6) * (py if side < 2 else px)
        wall = px if side < 2 else py
        centre_xy = -normal * (wall - ext - 0.02)
        if side < 2:
            centre_xy[1] = along
        else:
            centre_xy[0] = along
        lean_dir = -normal  # toward the wall
    elif candidates:
        pos, q = candidates[int(rng.integers(len(candidates)))]
        rot = _quat_to_matrix(q)
        side_normals = [rot[:, k] * sg for k in range(3) for sg in (1, -1) if abs(rot[2, k]) < 0.3]
        if not side_normals:
            return
        normal = side_normals[int(rng.integers(len(side_normals)))][:2].copy()
        normal /= np.linalg.norm(normal) + 1e-9
        dist = 0.5 * size + ext + 0.01
        centre_xy = np.array(pos[:2]) + normal * dist
        lean_dir = -normal
    else:
        return
    axis = np.array([-lean_dir[1], lean_dir[0], 0.0])
    yaw = math.atan2(lean_dir[1], lean_dir[0])
    # the top tilts away from the support: the die rests on an edge, its raised edge propped
    # against the support's side, its centre of mass between the two (stable with friction)
    q = _quat_mul(_axis_angle_quat(axis, -alpha), _axis_angle_quat(np.array([0, 0, 1.0]), yaw))
    q = _quat_mul(q, _CUBE_TURNS[int(rng.integers(len(_CUBE_TURNS)))])
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[size / 2] * 3, physicsClientId=c)
    b = p.createMultiBody(
        0.01 * size**3,
        shape,
        basePosition=[float(centre_xy[0]), float(centre_xy[1]), ext + 0.01],
        baseOrientation=q,
        physicsClientId=c,
    )
    p.changeDynamics(b, -1, lateralFriction=2.0, restitution=0.05, physicsClientId=c)
    bodies.append(b)
