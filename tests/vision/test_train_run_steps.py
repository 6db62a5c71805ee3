"""``dicecam train`` (no ``--from``) step by step: what each step is handed by the one before
(the data.yaml and folders the data step made, the detector's weights, the options of the run),
where it writes (the work folder's model set in a whole run, ``--out`` in a step run alone), what
the card's step measures, and what a whole run keeps of the earlier model and of a stopped run.

The data step is real (4 photos at 128 px, 10 held-out test photos at 96); the detector, the face
classifier and the evaluations are stood in for and record what they were given."""

from __future__ import annotations

import errno
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from dicecam_testing.cli import run_in_process as run
from dicecam_testing.folders import yolo_folder

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="dicecam train needs the [train] extra",
)

RECIPE = """
name: tiny
synth: {{n: 4, seed: 3, size: [128, 128], val_fraction: 0.25}}
test: {{n: 10, seed: 5, size: [96, 96]}}
real: []
detector: {{model: {model}, imgsz: 64, epochs: 1, batch: 4, cache: false, single_cls: true}}
faces: {{epochs: 1, batch: 8, jitter: 0}}
"""


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The steps of ``dicecam train`` stood in for, each recording its call: ``detector``
    (train_detector: its data.yaml, folder and options; returns ``weights``), ``shipped``
    (ship_detector: weights, ONNX, imgsz; writes the ONNX and .pt), ``faces`` (train_faces:
    train and val folders, ONNX, options; writes the ONNX and .pt), ``measured`` (evaluate_model:
    model, dataset, split, all_on_table), ``soup`` (soup_detector: the checkpoints). ``argv``
    runs the recipe :data:`RECIPE` with ``--work`` and ``--out`` (``work``, ``out``)."""
    import vision.train.detector as detector
    import vision.train.pipeline as pipeline
    import vision.train.run as run_
    import vision.train.soup as soup
    from vision.atomic import atomic_write
    from vision.train.recipe import REPO

    rec: dict[str, Any] = {k: [] for k in ("detector", "shipped", "faces", "measured", "soup")}
    rec["weights"] = tmp_path / "trained" / "best.pt"

    def train_detector(data_yaml: Path, project: Path, **kw: Any) -> Path:
        rec["detector"].append((Path(data_yaml), Path(project), kw))
        return rec["weights"]

    def ship_detector(weights: Path, onnx: Path, *, imgsz: int) -> Path:
        rec["shipped"].append((weights, onnx, imgsz))
        atomic_write(onnx, b"detector")
        atomic_write(onnx.with_suffix(".pt"), b"checkpoint")
        return onnx

    def train_faces(recipe, dirs: list[Path], onnx: Path, **kw: Any) -> Path:
        rec["faces"].append((list(dirs), onnx, kw))
        atomic_write(onnx, b"faces")
        atomic_write(onnx.with_suffix(".pt"), b"faces weights")
        return onnx

    def evaluate_model(model: Path, dataset: Path, *, split="val", limit=None, all_on_table=False):
        rec["measured"].append((model, Path(dataset), split, all_on_table))
        return {"images": 1}

    def soup_detector(checkpoints: list[Path], out: Path) -> Path:
        rec["soup"].append([Path(c) for c in checkpoints])
        return out

    monkeypatch.setattr(detector, "train_detector", train_detector)
    monkeypatch.setattr(pipeline, "ship_detector", ship_detector)
    monkeypatch.setattr(pipeline, "train_faces", train_faces)
    monkeypatch.setattr(run_, "evaluate_model", evaluate_model)
    monkeypatch.setattr(run_, "ROBOFLOW_EVAL", tmp_path / "real-eval")
    monkeypatch.setattr(soup, "soup_detector", soup_detector)
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(RECIPE.format(model=REPO / "datasets" / "recipes" / "yolo11-dice.yaml"))
    rec["work"], rec["out"] = (tmp_path / "work").resolve(), (tmp_path / "out").resolve()
    rec["out"].mkdir()
    rec["argv"] = ["train", "--recipe", str(recipe), "--work", str(rec["work"])]
    rec["argv"] += ["--out", str(rec["out"])]
    return rec


def _ran(capsys, rec: dict[str, Any], *argv: str) -> str:
    code, said, err = run(capsys, *rec["argv"], *argv)
    assert (code, err) == (0, ""), err
    return said


def test_a_whole_run_hands_each_step_what_the_one_before_made(capsys, tmp_path, recorded):
    rec, work, out = recorded, recorded["work"], recorded["out"]
    extra = yolo_folder(tmp_path / "extra", ["a", "b"])
    _ran(capsys, rec, "--name", "other", "--seed", "7", "--data", str(extra))
    synth, made = work / "synth-3-4", work / "model"
    ((data_yaml, project, kw),) = rec["detector"]
    assert (data_yaml, project) == (work / "data.yaml", work / "detector")
    assert (kw["seed"], kw["imgsz"], kw["epochs"], kw["device"]) == (7, 64, 1, "cpu")
    assert rec["shipped"] == [(rec["weights"], made / "other.onnx", 64)]
    ((train_dirs, faces, kw),) = rec["faces"]
    assert train_dirs == [synth / "images" / "train", extra.resolve()]
    assert kw["val_dirs"] == [synth / "images" / "val"]
    assert (faces, kw["seed"], kw["device"]) == (made / "other-faces.onnx", 7, "cpu")
    assert rec["measured"] == [
        (made / "other.onnx", synth, "val", False),
        (made / "other.onnx", work / "synth-test-s5-10", "train", False),  # all of it held out
        (made / "other.onnx", tmp_path / "real-eval", "val", True),  # real photos: on the table
    ]
    assert len(list((work / "synth-test-s5-10" / "images" / "train").glob("*.jpg"))) == 10
    names = ["other-faces.onnx", "other-faces.pt", "other.json", "other.md", "other.onnx"]
    assert sorted(p.name for p in out.iterdir()) == [*names, "other.pt"]
    assert (out / "other.onnx").read_bytes() == b"detector"
    assert f"Extra: {extra}" in (out / "other.md").read_text(encoding="utf-8")
    assert not list(out.glob("tiny*"))


@pytest.mark.parametrize(
    ("stage", "steps"),
    [
        ("data", []),
        ("detector", ["detector", "shipped"]),
        ("faces", ["faces"]),
        ("card", ["measured"]),
    ],
)
def test_a_step_run_alone_runs_that_step_only_and_writes_into_out(capsys, recorded, stage, steps):
    rec, out = recorded, recorded["out"]
    (out / "tiny.onnx").write_bytes(b"earlier detector")  # what --stage card measures
    said = _ran(capsys, rec, "--stage", stage)
    ran = [step for step in ("detector", "shipped", "faces", "measured") if rec[step]]
    assert ran == steps
    if stage == "data":
        assert f"data ready: {rec['work'] / 'data.yaml'}" in said
    if stage == "detector":
        assert rec["shipped"] == [(rec["weights"], out / "tiny.onnx", 64)]
    if stage == "faces":
        assert rec["faces"][0][1] == out / "tiny-faces.onnx"
    if stage == "card":
        assert {m for m, *_ in rec["measured"]} == {out / "tiny.onnx"}
        assert (out / "tiny.md").is_file() and (out / "tiny.json").is_file()
    assert not (rec["work"] / "model").exists()  # nothing staged: the step wrote into out


def test_a_soup_needs_no_data_and_trains_no_detector(capsys, tmp_path, recorded):
    rec, out = recorded, recorded["out"]
    parts = [tmp_path / "a.pt", tmp_path / "b.pt"]
    for part in parts:
        part.write_bytes(b"checkpoint")
    soup = [arg for part in parts for arg in ("--soup", str(part))]
    _ran(capsys, rec, "--stage", "detector", *soup)
    assert rec["soup"] == [parts] and not rec["detector"]
    assert rec["shipped"] == [(rec["work"] / "detector" / "soup.pt", out / "tiny.onnx", 64)]
    assert not list(rec["work"].glob("synth-*"))  # averaging renders nothing
    _ran(capsys, rec, *soup)  # a whole run: the soup is its detector
    assert len(rec["soup"]) == 2 and not rec["detector"]
    assert rec["shipped"][1] == (
        rec["work"] / "detector" / "soup.pt",
        rec["work"] / "model" / "tiny.onnx",
        64,
    )


def test_a_whole_run_keeps_the_earlier_companions_and_drops_a_stopped_runs_files(capsys, recorded):
    rec, out, made = recorded, recorded["out"], recorded["work"] / "model"
    earlier = ["tiny-cocked.onnx", "tiny-verify.onnx", "tiny-verify.pt", "tiny.onnx"]
    for name in earlier:
        (out / name).write_bytes(b"earlier " + name.encode())
    _ran(capsys, rec)
    for name in earlier[:3]:  # the models the recipe does not train go with the new one
        assert (out / name).read_bytes() == b"earlier " + name.encode()
    assert (out / "tiny.onnx").read_bytes() == b"detector"
    # the player drops the die check; a stopped run had left its copy in the work folder
    (out / "tiny-verify.onnx").unlink()
    (out / "tiny-verify.pt").unlink()
    made.mkdir(exist_ok=True)
    (made / "tiny-verify.onnx").write_bytes(b"a stopped run's copy")
    _ran(capsys, rec)
    assert not list(out.glob("tiny-verify*"))
    assert (out / "tiny-cocked.onnx").read_bytes() == b"earlier tiny-cocked.onnx"


def test_a_step_stopped_part_way_names_a_file_it_wrote_again_at_the_same_size(
    capsys, recorded, monkeypatch
):
    """A retrained classifier's ONNX has the size of the earlier one to the byte: that it is
    new is told by the file itself (written whole, as a new file), not by its size."""
    import vision.train.pipeline as pipeline
    from vision.atomic import atomic_write

    rec, out = recorded, recorded["out"]
    for name in ("tiny.onnx", "tiny-faces.onnx", "tiny-faces.pt"):
        (out / name).write_bytes(b"earlier " + name.encode())

    def train_faces(recipe, dirs, onnx: Path, **kw: Any) -> Path:
        atomic_write(onnx, b"retrained " + onnx.name.encode()[2:])  # the same size
        raise OSError(errno.ENOSPC, "No space left on device", str(onnx.with_suffix(".pt")))

    monkeypatch.setattr(pipeline, "train_faces", train_faces)
    assert len(b"retrained " + b"tiny-faces.onnx"[2:]) == len(b"earlier tiny-faces.onnx")
    code, _, err = run(capsys, *rec["argv"], "--stage", "faces")
    assert code == 1
    assert err.endswith(
        f"No space left on device: {out / 'tiny-faces.pt'}; new in {out}: tiny-faces.onnx; "
        "earlier there: tiny-faces.pt, tiny.onnx (the reader loads them together: run the step "
        "again)\n"
    )


def test_evaluate_model_measures_as_asked_and_skips_a_set_not_there(tmp_path, monkeypatch):
    import vision.evaluate
    from vision.train.run import evaluate_model

    asked: list[tuple] = []

    class Result:
        def format(self) -> str:
            return "figures"

        def to_dict(self) -> dict[str, int]:
            return {"images": 3}

    def evaluate_dataset(dataset, *, model, split, limit, all_on_table) -> Result:
        asked.append((dataset, model, split, limit, all_on_table))
        return Result()

    monkeypatch.setattr(vision.evaluate, "evaluate_dataset", evaluate_dataset)
    model = tmp_path / "m.onnx"
    assert evaluate_model(model, tmp_path / "nowhere") is None and not asked
    got = evaluate_model(model, tmp_path, split="train", limit=5, all_on_table=True)
    assert got == {"images": 3}
    assert asked == [(tmp_path, model, "train", 5, True)]


def test_the_held_out_set_a_stopped_run_left_is_rendered_whole_then_kept(capsys, recorded):
    """The card's held-out test set is rendered once: a stopped run's part (no DONE) is
    rendered whole again, a finished one is measured as it is."""
    from vision.synth import write_dataset

    rec, out = recorded, recorded["out"]
    (out / "tiny.onnx").write_bytes(b"earlier detector")
    test = rec["work"] / "synth-test-s5-10"
    write_dataset(test, 3, seed=5, size=(96, 96), val_fraction=0.0)  # stopped after 3 photos
    _ran(capsys, rec, "--stage", "card")
    photos = sorted((test / "images" / "train").glob("*.jpg"))
    assert len(photos) == 10 and (test / "DONE").is_file()
    photos[0].unlink()  # not rendered again: the set is done
    _ran(capsys, rec, "--stage", "card")
    assert len(list((test / "images" / "train").glob("*.jpg"))) == 9
    assert [d for _, d, split, _ in rec["measured"] if split == "train"] == [test, test]


def test_a_synthetic_set_without_a_val_folder_is_not_measured_on_val(capsys, recorded):
    """The card's step asks the evaluation's rule (find_images) and takes its refusal of a set
    with no images/val as no val photo, as it takes an empty images/val."""
    import shutil

    rec, out = recorded, recorded["out"]
    (out / "tiny.onnx").write_bytes(b"earlier detector")
    _ran(capsys, rec, "--stage", "data")
    shutil.rmtree(rec["work"] / "synth-3-4" / "images" / "val")
    said = _ran(capsys, rec, "--stage", "card")
    assert "synthetic val: no photo in " in said and "not measured" in said
    assert [split for _, _, split, _ in rec["measured"]] == ["train", "val"]  # test set, real


def test_a_test_seed_that_is_the_training_seed_is_refused_before_any_data(
    capsys, tmp_path, recorded
):
    """It was refused by the card's step, as a traceback: after the data, the detector and the
    face classifier of a whole run were made."""
    recipe = tmp_path / "same-seed.yaml"
    recipe.write_text(RECIPE.format(model="yolo11n.yaml").replace("seed: 5", "seed: 3"))
    argv = ["train", "--recipe", str(recipe), "--work", str(recorded["work"])]
    code, _, err = run(capsys, *argv, "--out", str(recorded["out"]))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.endswith(
        f"{recipe}: expected a test.seed other than synth.seed (the card's test set is held out "
        "of training), got 3 for both\n"
    )
    assert not recorded["work"].exists() and not any(recorded["out"].iterdir())
    assert not recorded["detector"] and not recorded["faces"]


def test_the_held_out_set_is_never_rendered_from_the_training_seed(tmp_path):
    from vision.train.recipe import Recipe
    from vision.train.run import synth_test_set

    recipe = Recipe.model_validate({"synth": {"seed": 4}, "test": {"seed": 4, "n": 2}})
    with pytest.raises(ValueError, match="the test seed must differ from the training seed, both"):
        synth_test_set(recipe, tmp_path)
    assert not any(tmp_path.iterdir())
    assert synth_test_set(Recipe.model_validate({"test": {"n": 0}}), tmp_path) is None
