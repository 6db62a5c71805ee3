"""A year of mornings against one long-running ``dicecam serve``: what it keeps on disk, and
whether its memory, file descriptors and threads stay flat.

Starts the service in a subprocess (the embedded tracker on SQLite, its clock read from a file
so that each turn falls on the next day at 09:00 UTC, a stand-in reader that decodes each photo
for real and reports six random dice), registers a player, logs in through the service, then
plays ``--days`` Morning Roll turns, each roll a distinct 1280x960 camera-page photo (a real
sample upscaled, with a little sensor noise, JPEG quality 90 as the page's canvas sends it),
keeping the advisor's first choice. Then it posts ``--reads`` photos to ``/api/v1/read``. It
prints the data folder's sizes (turns database, turn photos, outbox by state, tracker database)
and, every ``--every`` operations, the server's RSS, open file descriptors (and how many are
SQLite files), threads and the temporary files left in its private ``TMPDIR``.

    python tests/benchmarks/bench_longevity.py [--days 365] [--reads 2000] [--every 250]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "support")]

START = datetime(2027, 1, 1, 9, 0, tzinfo=UTC)


class FileClock:
    """The tracker's clock: the ISO time written in ``path`` (the benchmark moves it)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> datetime:
        return datetime.fromisoformat(self.path.read_text().strip())

    def set(self, now: datetime) -> None:
        """Move the clock (written whole: the server may read it at any time)."""
        from vision.atomic import atomic_write

        atomic_write(self.path, now.isoformat().encode())


class SixRandomDice:
    """Decodes each photo for real, then reports ``expected_dice`` (else six) random dice."""

    def read(self, image, expected_dice=None):
        from vision import Reading, load_image

        from dicecam_testing.turns import dice

        img = load_image(image)
        values = [random.randint(1, 6) for _ in range(expected_dice or 6)]
        return Reading(img.width, img.height, dice(values), expected_dice=expected_dice)


def serve(data: Path, port: int) -> None:
    """The server process: ``create_app`` as ``dicecam serve`` builds it, with the stand-ins;
    the tracker's photo retention also runs every 2 s (hourly in ``dicecam serve``), so that
    a year played in minutes is pruned as a year played in days would be."""
    import uvicorn

    from service.app import create_app
    from service.retention import schedule
    from service.settings import Settings
    from service.tracker import create_app as create_tracker_app

    settings = Settings(data_dir=data, port=port)
    tracker = create_tracker_app(
        f"sqlite:///{data / 'tracker.sqlite3'}",
        clock=FileClock(data / "clock.txt"),
        token_days=3650,
    )
    app = create_app(settings, reader=SixRandomDice(), tracker_app=tracker)
    schedule(app, tracker.state.retention, every_s=2.0)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def camera_photos(seed: int = 1):
    """Endless distinct camera-page photos (bytes)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    bases = []
    for path in sorted((REPO / "datasets" / "samples").glob("*.jpg")):
        with Image.open(path) as im:
            bases.append(np.asarray(im.convert("RGB").resize((1280, 960)), dtype=np.int16))
    n = 0
    while True:
        base = bases[n % len(bases)]
        noisy = np.clip(base + rng.normal(0, 3, base.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(noisy).save(buf, "JPEG", quality=90)
        n += 1
        yield buf.getvalue()


def probe(pid: int, tmp: Path) -> dict[str, float]:
    """The server's RSS (MiB), open fds (of them SQLite files), threads, files in its TMPDIR."""
    import psutil

    proc = psutil.Process(pid)
    files = [f.path for f in proc.open_files()]
    return {
        "rss_mib": round(proc.memory_info().rss / 2**20, 1),
        "fds": proc.num_fds(),
        "sqlite_fds": sum(".sqlite3" in f for f in files),
        "threads": proc.num_threads(),
        "tmp_files": sum(1 for p in tmp.rglob("*") if p.is_file()),
    }


def size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def disk(data: Path) -> dict[str, float]:
    """Sizes in MB of what the data folder holds."""
    parts = {
        "turns_db": sum(size(p) for p in data.glob("turns.sqlite3*")),
        "turn_photos": size(data / "turn-photos"),
        "outbox_pending": size(data / "outbox" / "pending"),
        "outbox_delivered": size(data / "outbox" / "delivered"),
        "outbox_rejected": size(data / "outbox" / "rejected"),
        "tracker_db": sum(size(p) for p in data.glob("tracker.sqlite3*")),
    }
    out = {k: round(v / 1e6, 2) for k, v in parts.items()}
    out["total"] = round(sum(parts.values()) / 1e6, 2)
    return out


def play(c: httpx.Client, token: str, photos, stats: dict[str, int]) -> dict:
    """One Morning Roll turn through the API, photos for every roll; the finished turn."""
    turn = c.post("/api/v1/turns", json={"player": "heather", "tracker_token": token}).json()
    tid = turn["id"]
    while not turn["over"]:
        photo = next(photos)
        stats["photos"] += 1
        stats["photo_bytes"] += len(photo)
        r = c.post(f"/api/v1/turns/{tid}/rolls", files={"photo": ("roll.jpg", photo, "image/jpeg")})
        r.raise_for_status()
        turn = r.json()
        stats["ops"] += 1
        if turn["over"]:
            break
        best = turn["keeps"][0]
        body = {"dice": best["dice"], "forced_reroll": best["forced_reroll"]}
        turn = c.post(f"/api/v1/turns/{tid}/keep", json=body).json()
        stats["ops"] += 1
        if not turn["over"] and not turn["must_roll"] and best["then"] == "bank":
            turn = c.post(f"/api/v1/turns/{tid}/bank").json()
            stats["ops"] += 1
    return turn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--every", type=int, default=250, help="operations between probes")
    ap.add_argument(
        "--keep-days", type=int, default=365, help="DICECAM_KEEP_PHOTOS_DAYS (0: for good)"
    )
    ap.add_argument("--serve", nargs=2, metavar=("DATA", "PORT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(Path(args.serve[0]), int(args.serve[1]))
        return

    from dicecam_testing.servers import bound_socket

    root = Path(tempfile.mkdtemp(prefix="dicecam-longevity-"))
    data, tmp = root / "data", root / "tmp"
    data.mkdir()
    tmp.mkdir()
    clock = FileClock(data / "clock.txt")
    clock.set(START)
    held = bound_socket()  # the port stays this process's until the server listens on it
    port = held.getsockname()[1]
    env = {**os.environ, "TMPDIR": str(tmp), "DICECAM_DATA_DIR": str(data)}
    env["DICECAM_KEEP_PHOTOS_DAYS"] = str(args.keep_days)
    env.pop("DICECAM_TURNS_DATABASE", None)
    cmd = [sys.executable, __file__, "--serve", str(data), str(port)]
    server = subprocess.Popen(cmd, env=env, cwd=REPO)
    url = f"http://127.0.0.1:{port}"
    try:
        c = httpx.Client(base_url=url, timeout=60)
        deadline = time.monotonic() + 60
        while True:
            try:
                c.get("/api/v1/health").raise_for_status()
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.2)
        player = {"name": "heather", "password": "correct horse battery", "timezone": "UTC"}
        c.post("/tracker/api/v1/players", json=player).raise_for_status()
        body = {k: player[k] for k in ("name", "password")}
        token = c.post("/api/v1/tracker/tokens", json=body).json()["token"]

        photos = camera_photos()
        stats = {"ops": 0, "photos": 0, "photo_bytes": 0, "banked": 0, "bust": 0, "submitted": 0}
        print("probe", {"ops": 0, **probe(server.pid, tmp)}, flush=True)
        next_probe = args.every
        start = time.monotonic()
        for day in range(args.days):
            clock.set(START + timedelta(days=day))
            if day % 30 == 29:
                time.sleep(2.5)  # a retention pass on the tracker's new day
            turn = play(c, token, photos, stats)
            stats[turn["outcome"]] += 1
            stats["submitted"] += (turn["submission"] or {}).get("status") == "submitted"
            if stats["ops"] >= next_probe:
                print("probe", {"ops": stats["ops"], **probe(server.pid, tmp)}, flush=True)
                next_probe += args.every
            if day in (29, 89, 179) or day == args.days - 1:
                print(f"disk after {day + 1} turns (MB)", disk(data), flush=True)
        turn_s = time.monotonic() - start
        mean_kb = stats["photo_bytes"] / max(stats["photos"], 1) / 1e3
        print(
            f"{args.days} turns in {turn_s:.0f} s: {stats['photos']} photos "
            f"(mean {mean_kb:.0f} kB), {stats['banked']} banked, {stats['bust']} bust, "
            f"{stats['submitted']} submitted",
            flush=True,
        )
        for i in range(args.reads):
            photo = next(photos)
            c.post(
                "/api/v1/read", files={"photo": ("r.jpg", photo, "image/jpeg")}
            ).raise_for_status()
            stats["ops"] += 1
            if (i + 1) % args.every == 0:
                print("probe", {"ops": stats["ops"], **probe(server.pid, tmp)}, flush=True)
        print("final disk (MB)", disk(data), flush=True)
    finally:
        server.terminate()
        server.wait(20)


if __name__ == "__main__":
    main()
