"""Make ultralytics work offline, quietly and fast on a small CPU.

Measured here (see ``../shared/notes/ultralytics-offline.md``): ultralytics checks for updates
at import, downloads Arial.ttf before plotting, writes its settings file in the home folder and
uses one torch thread on a 2-core machine. :func:`prepare_ultralytics` fixes all of that before
the first import; call it instead of importing ultralytics directly.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from types import ModuleType

from vision.atomic import atomic_copy

__all__ = ["prepare_ultralytics", "train_threads"]

_PREPARED: ModuleType | None = None


def _find_ttf() -> Path | None:
    """A TTF font already on disk (matplotlib ships DejaVuSans), to stand in for Arial."""
    try:
        import matplotlib

        candidate = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        if candidate.is_file():
            return candidate
    except ImportError:
        pass
    for root in ("/usr/share/fonts", "/usr/local/share/fonts"):
        for path in Path(root).rglob("*.ttf") if Path(root).is_dir() else []:
            return path
    return None


def prepare_ultralytics(
    config_dir: str | os.PathLike[str] | None = None, threads: int | None = None
) -> ModuleType:
    """Set up the environment, import ultralytics and return the module.

    Args:
        config_dir: where ultralytics keeps settings and fonts (default: ``$YOLO_CONFIG_DIR``
            when set, else a private temporary folder removed when the process exits).
        threads: torch threads (default: ``DICECAM_TRAIN_THREADS``, else every core).
    """
    global _PREPARED
    if _PREPARED is not None:
        return _PREPARED
    os.environ.setdefault("YOLO_OFFLINE", "1")
    # Never let ultralytics pip-install anything at run time (it tries pi-heif on any
    # photo Pillow cannot identify).
    os.environ["YOLO_AUTOINSTALL"] = "false"
    os.environ.setdefault("YOLO_VERBOSE", "False")
    given = config_dir or os.environ.get("YOLO_CONFIG_DIR")
    cfg = Path(given or tempfile.mkdtemp(prefix="dicecam-yolo-"))
    if not given:  # a private folder: gone with the process (it held 1.5 MB each run)
        atexit.register(shutil.rmtree, cfg, True)
    cfg.mkdir(parents=True, exist_ok=True)
    os.environ["YOLO_CONFIG_DIR"] = str(cfg)
    os.environ.setdefault("MPLCONFIGDIR", str(cfg / "matplotlib"))
    # OpenVINO's telemetry forks processes that try to reach the network: opt out.
    intel = Path.home() / "intel"
    try:
        intel.mkdir(exist_ok=True)
        (intel / "openvino_telemetry").write_text("0")
    except OSError:
        pass
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        target = cfg / name
        if not target.exists():
            font = _find_ttf()
            if font is not None:  # whole or not at all: a later run takes it as it is
                atomic_copy(font, target, sync=False)

    import torch
    from PIL import Image

    pillow_open = Image.open
    import ultralytics
    import ultralytics.utils.patches  # noqa: F401  (patches Image.open on its first import)
    from ultralytics.utils import SETTINGS, torch_utils

    # ultralytics monkey-patches PIL.Image.open process-wide when its patches module is first
    # imported (lazily, by training or export, unless imported above); give Pillow its own back
    # so an unreadable photo stays a plain UnidentifiedImageError everywhere else.
    Image.open = pillow_open

    n = threads or train_threads()
    torch.set_num_threads(n)
    torch_utils.NUM_THREADS = n
    SETTINGS.update({"sync": False, "datasets_dir": str(cfg / "datasets")})
    _PREPARED = ultralytics
    return ultralytics


def train_threads() -> int:
    """The torch threads of training: ``DICECAM_TRAIN_THREADS`` when set, else every core.

    Raises:
        ValueError: the variable is set to something other than a whole number from 1 up.
    """
    given = os.environ.get("DICECAM_TRAIN_THREADS", "").strip()
    if not given:
        return os.cpu_count() or 1
    try:
        n = int(given)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"DICECAM_TRAIN_THREADS must be a whole number from 1 up, got {given!r}")
    return n
