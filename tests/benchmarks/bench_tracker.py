"""Tracker throughput: submissions per second and latency with 20 concurrent clients.

Runs ``dicecam tracker`` in a subprocess (one uvicorn worker) on SQLite, then on a throwaway
PostgreSQL server (Debian's binaries; skipped with a note when absent). Players are seeded
straight into the database (one turn per player per day, so each submission needs its own
player); the submissions go over real HTTP, each with a small reading as evidence.

    python tests/benchmarks/bench_tracker.py [--clients 20] [--per-client 25]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "support")]


def _conftest():
    spec = importlib.util.spec_from_file_location(
        "tracker_conftest", REPO / "tests/service/conftest.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def seed(url: str, n: int, tz: str) -> list[tuple[str, str]]:
    from service.tracker import store
    from service.tracker.db import make_engine, make_sessionmaker, migrate
    from service.tracker.schemas import Registration
    from service.tracker.security import hash_password

    engine = make_engine(url)
    migrate(engine)
    pw = "bench-password"
    hashed = hash_password(pw)
    out = []
    now = datetime.now(UTC)
    with make_sessionmaker(engine)() as session:
        for i in range(n):
            p = store.register(
                session,
                Registration(name=f"b{i:05d}", password=pw, timezone=tz),
                now,
                password_hash=hashed,
            )
            out.append((p.name, store.issue_token(session, p, now)))
        session.commit()
    engine.dispose()
    return out


def run(url: str, clients: int, per_client: int, label: str) -> None:
    conf = _conftest()
    tz = conf.midday_zone_name()
    players = seed(url, clients * per_client, tz)
    from dicecam_testing.servers import bound_socket

    held = bound_socket()  # the port stays ours until the tracker listens on it (and after)
    port = held.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # the server's stderr: a file, not a pipe (one nobody reads can fill and stall it); closed
    # in the finally below
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service.cli",
            "tracker",
            "--port",
            str(port),
            "--database-url",
            url,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/api/v1/rounds", timeout=1)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(
                        f"bench_tracker: the {label} tracker did not start:\n{log.read()[-2000:]}"
                    ) from None
                time.sleep(0.1)
        reading = {
            "width": 640,
            "height": 480,
            "dice": [
                {
                    "value": v,
                    "box": [10.0 * v, 10.0, 10.0 * v + 30, 40.0],
                    "confidence": 0.98,
                    "on_table": True,
                    "cocked": False,
                }
                for v in (1, 2, 2, 3, 5, 6)
            ],
        }

        def client(k: int) -> list[float]:
            lat = []
            with httpx.Client(base_url=base, timeout=60) as http:
                for name, token in players[k * per_client : (k + 1) * per_client]:
                    body = {
                        "player": name,
                        "score": 600,
                        "idempotency_key": str(uuid.uuid4()),
                        "rolls": [{"values": [1, 2, 2, 3, 5, 6], "reading": reading}],
                    }
                    t = time.perf_counter()
                    r = http.post(
                        "/api/v1/turns", json=body, headers={"Authorization": f"Bearer {token}"}
                    )
                    lat.append(time.perf_counter() - t)
                    if r.status_code != 201:
                        raise RuntimeError(f"{r.status_code}: {r.text}")
            return lat

        t0 = time.perf_counter()
        with cf.ThreadPoolExecutor(clients) as pool:
            lat = [x for xs in pool.map(client, range(clients)) for x in xs]
        wall = time.perf_counter() - t0
        board = httpx.get(base + "/api/v1/leaderboard", timeout=30).json()["standings"]
        assert len(board) == len(players), "every submission stored once"
        lat.sort()
        p99 = lat[min(len(lat) - 1, int(round(0.99 * len(lat))) - 1)]
        print(
            f"{label:10s} clients={clients} submissions={len(lat)} "
            f"throughput={len(lat) / wall:7.1f}/s p50={statistics.median(lat) * 1000:6.1f} ms "
            f"p99={p99 * 1000:6.1f} ms (all {len(board)} stored once)"
        )
    finally:
        held.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=20, help="concurrent clients (default 20)")
    ap.add_argument(
        "--per-client", type=int, default=25, help="submissions per client (default 25)"
    )
    args = ap.parse_args()
    print(f"cpu cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        run(f"sqlite:///{tmp}/bench.sqlite3", args.clients, args.per_client, "sqlite")
    if importlib.util.find_spec("psycopg") is None:
        print("postgresql skipped: psycopg is not installed (pip install 'dicecam[postgres]')")
        return
    conf = _conftest()
    try:
        pg = conf.ThrowawayPostgres()
    except FileNotFoundError as exc:
        print(f"postgresql skipped: {exc}")
        return
    try:
        try:
            pg.start()
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"postgresql skipped: the throwaway server did not start: {exc}")
            return
        run(pg.create_database(), args.clients, args.per_client, "postgresql")
    finally:
        # stops the server if it runs, and removes its folder in any case
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            pg.stop()


if __name__ == "__main__":
    main()
