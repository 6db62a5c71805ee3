"""Ctrl-C in ``dicecam`` (a real subprocess sent SIGINT, as a terminal does, or the command
interrupted in process): status 130, one line on stderr, and no half-written output."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import textwrap

import pytest

import service.cli
from service.cli import main

from dicecam_testing.cli import DICECAM, ROOT, SAMPLES, interrupt_when, many_photos
from dicecam_testing.folders import yolo_folder


def test_ctrl_c_during_read_exits_130_with_one_line(tmp_path):
    photos = many_photos(tmp_path / "photos", 6)
    proc = subprocess.Popen(
        [*DICECAM, "read", "--json", "--backend", "onnxruntime", str(photos)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    first: list[str] = []
    out, err = interrupt_when(proc, lambda: first.append(proc.stdout.readline()) or first[0])
    assert proc.returncode == 130
    assert err == "dicecam read: interrupted\n"
    lines = (first[0] + out).splitlines()
    assert 1 <= len(lines) < 6 * len(SAMPLES)
    assert all(json.loads(line)["image"] for line in lines)  # each line whole


def test_ctrl_c_during_label_leaves_no_output(tmp_path):
    photos = many_photos(tmp_path / "photos", 8)
    out_dir = tmp_path / "labelled"
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [*DICECAM, "label", str(photos), "--out", str(out_dir), "--format", "yolo"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=ROOT,
            start_new_session=True,
        )
        # the progress bar's first line: the reader is loaded, reading has begun
        interrupt_when(proc, lambda: "label [" in log.read_text())
    assert proc.returncode == 130, log.read_text()
    lines = log.read_text().splitlines()
    assert lines[-1] == "dicecam label: interrupted"
    assert all(line.startswith("label [") for line in lines[:-1])  # no traceback
    assert not out_dir.exists()  # labels are written once every photo is read


@pytest.mark.parametrize("out_exists", [False, True], ids=["new-out", "empty-out"])
def test_ctrl_c_while_label_writes_leaves_out_as_it_was(tmp_path, monkeypatch, capsys, out_exists):
    # stopped after the labels (and the copied photos) were written, before the review list
    import vision.labelling.batch as batch

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch, "write_review", interrupted)
    photos = tmp_path / "photos"
    photos.mkdir()
    for photo in SAMPLES[:2]:
        shutil.copy(photo, photos)
    out_dir = tmp_path / "labelled"
    if out_exists:
        out_dir.mkdir()
    argv = ["label", str(photos), "--out", str(out_dir), "--format", "yolo", "--no-progress"]
    assert main(argv) == 130
    assert capsys.readouterr().err == "dicecam label: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["photos", "labelled"] if out_exists else ["photos"]
    )  # no half-written folder, nor a hidden one beside it
    assert not out_exists or not any(out_dir.iterdir())
    monkeypatch.undo()  # the same command runs again, whole
    assert main(argv) == 0
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["labelled"] == 2 and summary["outputs"]["labels"] == str(out_dir / "data.yaml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labelled", "photos"]


def test_ctrl_c_while_labels_convert_writes_leaves_no_out(tmp_path, monkeypatch, capsys):
    import vision.labelling.batch as batch

    source = yolo_folder(tmp_path / "set", ["a", "b"])
    for name, photo in zip("ab", SAMPLES, strict=False):
        shutil.copy(photo, source / "images" / f"{name}.jpg")
    real_write_coco = batch.write_coco

    def write_then_stop(photos, out, **kwargs):
        real_write_coco(photos, out, **kwargs)  # the photos copied, the annotations written
        raise KeyboardInterrupt

    monkeypatch.setattr(batch, "write_coco", write_then_stop)
    out_dir = tmp_path / "coco"
    argv = ["labels", "convert", str(source), "--to", "coco", "--out", str(out_dir)]
    assert main(argv) == 130
    assert capsys.readouterr().err == "dicecam labels convert: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]
    monkeypatch.undo()
    assert main(argv) == 0
    assert (out_dir / "annotations" / "instances_default.json").is_file()
    assert f"-> {out_dir / 'annotations' / 'instances_default.json'}" in capsys.readouterr().out


def test_ctrl_c_during_synth_leaves_whole_files(tmp_path):
    out_dir = tmp_path / "synth"
    proc = subprocess.Popen(
        [*DICECAM, "synth", "--n", "200", "--size", "128", "128", "--out", str(out_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    rendered = out_dir / "images" / "train"
    _, err = interrupt_when(proc, lambda: rendered.is_dir() and any(rendered.iterdir()))
    assert proc.returncode == 130
    assert err.splitlines()[-1] == "dicecam synth: interrupted" and "Traceback" not in err
    assert not list(out_dir.rglob("*.tmp"))
    for image in out_dir.glob("images/*/*.jpg"):  # each photo has its labels
        assert (out_dir / "labels" / image.parent.name / f"{image.stem}.txt").is_file()


def test_ctrl_c_while_starting_up_is_one_line(monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(service.cli, "build_parser", interrupted)
    assert main(["read", "x.jpg"]) == 130
    assert capsys.readouterr().err == "dicecam: interrupted\n"


STOPPED_IN_EVAL = """
import service.cli.scoring_cmds as cmds

def run_score(args):
    # Ctrl-C in code run from a string, as namedtuple and dataclass build their methods
    eval("(_ for _ in ()).throw(KeyboardInterrupt)")

cmds.run_score = run_score
"""


def test_ctrl_c_in_code_built_from_a_string_exits_130(tmp_path):
    # CPython takes a KeyboardInterrupt out of an eval for unhandled, and `python -m` then
    # died of SIGINT after `main` had said "interrupted" and returned 130 (a Ctrl-C while
    # Pillow's plugins were first imported, in `dicecam label`)
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(STOPPED_IN_EVAL))
    proc = subprocess.run(
        [*DICECAM, "score", "1", "1", "5", "2", "3", "4"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
        # as a terminal starts it: SIGINT not ignored, or dying of it could not be seen
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert (proc.returncode, proc.stderr) == (130, "dicecam score: interrupted\n")
