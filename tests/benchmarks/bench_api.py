"""Benchmark: ``POST /api/read`` of a real ``dicecam serve`` process under concurrent clients.

    python tests/benchmarks/bench_api.py                       # shipped model, 4 clients, 30 s
    python tests/benchmarks/bench_api.py --model other.onnx --clients 8 --seconds 10

Starts ``dicecam serve --no-tracker`` on a free port (``DICECAM_MODEL`` set from ``--model``),
then each client posts 640x480 JPEG photos back to back: real photos from
../shared/datasets/roboflow-dice/eval when present, else synthetic rolls. Every request carries
distinct bytes (a JPEG comment), so the service's per-photo reading cache never answers.
Prints throughput (readings/s) and p50/p90/p99 latency, and the count of non-200 answers.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "support")]
EVAL = REPO.parent / "shared" / "datasets" / "roboflow-dice" / "eval" / "images"


def photos(count: int) -> list[bytes]:
    from PIL import Image

    sources = sorted(EVAL.glob("*.jpg"))[:count] if EVAL.is_dir() else []
    out = []
    for i in range(count):
        if sources:
            im = Image.open(sources[i % len(sources)]).convert("RGB").resize((640, 480))
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=90)
            out.append(buf.getvalue())
        else:
            from vision.synth import make_sample

            out.append(make_sample(3, i, 640, 480).jpeg)
    return out


def distinct(jpeg: bytes, n: int) -> bytes:
    """The same picture with a JPEG comment segment naming request ``n``."""
    payload = f"bench {n}".encode()
    return jpeg[:2] + b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload + jpeg[2:]


def cpu() -> str:
    """The CPU's model name (``platform.processor()`` says only ``x86_64`` on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, help="ONNX reader model (default: the shipped one)")
    ap.add_argument("--clients", type=int, default=4, help="concurrent clients (default 4)")
    ap.add_argument("--seconds", type=float, default=30.0, help="time posting (default 30)")
    ap.add_argument("--photos", type=int, default=16, help="distinct photos (default 16)")
    args = ap.parse_args()

    model = args.model or REPO / "models" / "dicecam-reader.onnx"
    if not model.is_file():
        print(f"bench_api: no reader model at {model}; pass --model PATH", file=sys.stderr)
        return 2
    from dicecam_testing.servers import bound_socket

    held = bound_socket()  # the port stays this process's until the server listens on it
    port = held.getsockname()[1]
    tmp = tempfile.TemporaryDirectory(prefix="dicecam-bench-")  # the server's data dir and log
    data = Path(tmp.name)
    log = (data / "server.log").open("w")  # a file, not a pipe: a full pipe would stall it
    env = {**os.environ, "DICECAM_MODEL": str(model.resolve())}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service.cli",
            "serve",
            "--no-tracker",
            "--port",
            str(port),
            "--data-dir",
            str(data),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"

    def server_log() -> str:
        log.flush()
        return (data / "server.log").read_text(errors="replace")[-2000:]

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/api/v1/health", timeout=2)
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    print(f"bench_api: server did not start:\n{server_log()}", file=sys.stderr)
                    return 1
                time.sleep(0.2)
        pictures = photos(args.photos)
        warm = httpx.post(
            url + "/api/read", files={"photo": ("w.jpg", pictures[0], "image/jpeg")}, timeout=120
        )
        if warm.status_code != 200:
            print(
                f"bench_api: warm-up read failed: {warm.status_code} {warm.text}", file=sys.stderr
            )
            return 1

        latencies: list[float] = []
        errors: dict[int, int] = {}
        lock = threading.Lock()
        counter = iter(range(10**9))
        stop_at = time.monotonic() + args.seconds

        def client() -> None:
            with httpx.Client(base_url=url, timeout=60) as c:
                while time.monotonic() < stop_at:
                    n = next(counter)
                    body = distinct(pictures[n % len(pictures)], n)
                    t0 = time.perf_counter()
                    r = c.post("/api/read", files={"photo": (f"{n}.jpg", body, "image/jpeg")})
                    dt = time.perf_counter() - t0
                    with lock:
                        if r.status_code == 200:
                            latencies.append(dt)
                        else:
                            errors[r.status_code] = errors.get(r.status_code, 0) + 1

        t0 = time.monotonic()
        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        tmp.cleanup()

    if not latencies:
        print(f"bench_api: no successful reads; errors {errors}", file=sys.stderr)
        return 1
    q = statistics.quantiles(sorted(latencies), n=100, method="inclusive")
    print(f"machine        {cpu()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"model          {model}")
    print(
        f"clients        {args.clients} concurrent, {wall:.1f} s, photos 640x480 JPEG "
        f"({'roboflow-dice eval' if EVAL.is_dir() else 'synthetic'})"
    )
    print(f"requests       {len(latencies)} ok, errors {errors or 'none'}")
    print(f"throughput     {len(latencies) / wall:.1f} readings/s")
    print(
        f"latency        p50 {q[49] * 1000:.1f} ms   p90 {q[89] * 1000:.1f} ms   "
        f"p99 {q[98] * 1000:.1f} ms   max {max(latencies) * 1000:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
