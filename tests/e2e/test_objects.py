"""The `objects` model (issue 17, part 1) on clips made from real photos: a person (`astronaut`), a cat
(`chelsea`) and a cup (`coffee`) moving over an object-free background at 20–60 % of the frame height.

Targets: the right class in ≥ 0.9 of frames at IoU ≥ 0.5 against the model's own box on the still
photo mapped into the frame; ≤ 0.05 false detections per frame on object-free scenes; the software
path and the baseline agree.
"""

import numpy as np
import pytest
from conftest import load_script, read_jsonl, run_cli
from PIL import Image

from zerocopy.catalog import CATALOG
from zerocopy.detections import box_iou
from zerocopy.samples import load_photo, write_photo_clip

ENTRY = CATALOG["objects"]
SENSITIVITY = load_script("measure_input_sensitivity")  # the model by hand under ordinary resamplers
# (photo, the class it shows, its height as a share of the frame's); smaller photos: SMALL, below
MOVING = [("astronaut", "person", 0.6), ("astronaut", "person", 0.4), ("chelsea", "cat", 0.4),
          ("coffee", "coffee cup", 0.4)]
# Below 40 % of the height, as measured on this tree (threshold 0.4, 12 frames, software and baseline alike):
# (photo, class, height share, least and most share of frames found at IoU ≥ 0.5), each bound one frame short of the
# measured figure, so a change in what the model finds small shows here.
SMALL = [("astronaut", "person", 0.3, 0.9, 1.0),  # measured 1.0
         ("astronaut", "person", 0.2, 0.0, 0.1),  # measured 0.0: never Person (a Dog, 0.41–0.44, in 2–3 frames)
         ("chelsea", "cat", 0.3, 0.9, 1.0),  # measured 1.0
         ("chelsea", "cat", 0.2, 0.55, 1.0),  # measured 0.67 (8 of 12; at threshold 0.3: 0.92, baseline 0.83)
         ("coffee", "coffee cup", 0.3, 0.0, 0.1)]  # measured 0.0 (at threshold 0.3: 0.08, baseline 0.17)
# The same smaller photos with `--tiles` (ROWS rows of square tiles beside the whole frame), which meet the target:
# (photo, class, height share, rows, whether the paths' boxes of that class agree as for MOVING)
TILED = [("astronaut", "person", 0.2, 1, True), ("coffee", "coffee cup", 0.3, 1, True),
         ("coffee", "coffee cup", 0.2, 2, True),
         # found in ≥ 0.9 of frames on both paths (measured 0.92 with 1 row, 1.0 with 2), but its spurious second Cat
         # box (see `assert_paths_agree`) comes and goes differently on each path: its best box must agree
         ("chelsea", "cat", 0.2, 1, False)]
# Object-free scenes: the model finds nothing in these still photos at any score ≥ 0.3 (checked when chosen).
FREE = ("rocket", "grass", "gravel")


def still_box(photo: str, label: str) -> np.ndarray:
    """The model's own best box of `label` on the whole still photo, in the photo's pixels."""
    img = load_photo(photo)
    h, w = img.shape[:2]
    found = SENSITIVITY.ByHand(label)(np.asarray(Image.fromarray(img).resize((300, 300), Image.BILINEAR)), w, h)
    assert len(found), f"the model finds no {label} on the still {photo}"
    return found.xyxy[int(np.argmax(found.scores))]


def detect(path, out, *extra):
    assert run_cli("detect", path, "--model", "objects", "--json", out, "--quiet", *extra) == 0
    return read_jsonl(out)


def found_share(lines, truth, label) -> float:
    hits = 0
    for line, box in zip(lines, truth, strict=True):
        boxes = [d["box"] for d in line["detections"] if d.get("name") == label]
        hits += bool(boxes) and float(box_iou(np.asarray([box]), np.asarray(boxes)).max()) >= 0.5
    return hits / len(truth)


@pytest.mark.parametrize(("photo", "label", "share"), MOVING)
def test_the_right_class_is_found_where_the_photo_is(photo, label, share, tmp_path):
    box = still_box(photo, label)
    clip = tmp_path / f"{photo}.mp4"
    placed = write_photo_clip(clip, photo, "rocket", share)
    truth = [box * s + np.array([x, y, x, y], np.float32) for x, y, s in placed]
    sw = detect(clip, tmp_path / "sw.jsonl", "--path", "software")
    assert found_share(sw, truth, label) >= 0.9
    base = detect(clip, tmp_path / "base.jsonl", "--path", "baseline")
    assert found_share(base, truth, label) >= 0.9
    assert_paths_agree(sw, base, label, clip)


def assert_paths_agree(sw: list, base: list, label: str, clip) -> None:
    """The face criterion (≥ 0.95 of the baseline's boxes matched, ≤ 0.05 extra boxes a frame) wherever two
    ordinary RGB resamplers, the model run by hand, meet it among themselves. Where even they do not (the cat
    clip: a second, enclosing Cat box scores near the threshold and comes and goes with the resampler;
    docs/models.md), the paths must agree on each frame's best box and disagree no more than those
    resamplers do."""
    from zerocopy.agreement import compare_runs

    agree = compare_runs(only(sw, label), only(base, label))
    floor = SENSITIVITY.resampler_floor(clip, label)
    strict = floor["matched_share"] >= 0.95 and floor["extra"] <= 0.05 * floor["frames"]
    if strict:
        assert agree["matched_share"] >= 0.95 and agree["extra"] <= 0.05 * len(sw), agree
        return
    # the floor as measured (cat: 0.81 and 4 extra in 12 frames): a clip where even it fell further would not
    # measure the paths any more
    assert floor["matched_share"] >= 0.75 and floor["extra"] <= 0.4 * floor["frames"], floor
    best = compare_runs(best_only(sw, label), best_only(base, label))
    assert best["matched_share"] == 1.0 and best["extra"] == 0 and best["max_score_diff"] <= 0.05, best
    assert agree["matched_share"] >= floor["matched_share"] and agree["extra"] <= floor["extra"], (agree, floor)


def best_only(lines, label):
    """Each frame's best-scoring box of `label`."""
    return [{**x, "detections": sorted(y["detections"], key=lambda d: -d["score"])[:1]} for x, y in
            zip(lines, only(lines, label), strict=True)]


def only(lines, label):
    """Each frame's boxes of `label` (borderline boxes of other classes, scores near the threshold, may differ)."""
    return [{**x, "detections": [d for d in x["detections"] if d["name"] == label]} for x in lines]


@pytest.mark.parametrize(("photo", "label", "share", "rows", "agrees"), TILED)
def test_tiles_find_the_smaller_photos(photo, label, share, rows, agrees, tmp_path):
    from zerocopy.agreement import compare_runs

    box = still_box(photo, label)
    clip = tmp_path / f"{photo}.mp4"
    truth = [box * s + np.array([x, y, x, y], np.float32) for x, y, s in write_photo_clip(clip, photo, "rocket", share)]
    runs = {path: detect(clip, tmp_path / f"{path}.jsonl", "--path", path, "--tiles", str(rows))
            for path in ("software", "baseline")}
    for path, lines in runs.items():
        assert found_share(lines, truth, label) >= 0.9, path
    if agrees:
        agree = compare_runs(only(runs["software"], label), only(runs["baseline"], label))
        assert agree["matched_share"] >= 0.95 and agree["extra"] <= 0.05 * len(truth), agree
    else:  # the object's own box still agrees
        best = compare_runs(best_only(runs["software"], label), best_only(runs["baseline"], label))
        assert best["matched_share"] == 1.0 and best["extra"] == 0, best


@pytest.mark.parametrize(("photo", "label", "share", "least", "most"), SMALL)
def test_smaller_photos_are_found_as_measured(photo, label, share, least, most, tmp_path):
    box = still_box(photo, label)
    clip = tmp_path / f"{photo}.mp4"
    truth = [box * s + np.array([x, y, x, y], np.float32) for x, y, s in write_photo_clip(clip, photo, "rocket", share)]
    for path in ("software", "baseline"):
        found = found_share(detect(clip, tmp_path / f"{path}.jsonl", "--path", path), truth, label)
        assert least <= found <= most, (path, found)


@pytest.mark.parametrize("scene", FREE)
def test_object_free_scenes_stay_quiet(scene, tmp_path):
    from zerocopy.samples import ClipSpec, write_clip

    clip = tmp_path / f"{scene}.mp4"
    write_clip(clip, ClipSpec(width=1280, height=720, frames=12, face=None, background=scene, pan=True, noise=2.0))
    for path, extra in (("software", ()), ("baseline", ()), ("software", ("--tiles", "2"))):
        lines = detect(clip, tmp_path / f"{path}.jsonl", "--path", path, *extra)
        false = sum(len(line["detections"]) for line in lines)
        assert false / len(lines) <= 0.05, (path, extra, [line["detections"] for line in lines if line["detections"]])


def test_classes_keeps_only_the_named_labels(tmp_path):
    clip = tmp_path / "chelsea.mp4"
    write_photo_clip(clip, "chelsea", "rocket", 0.4, frames=4)
    assert any(line["detections"] for line in detect(clip, tmp_path / "all.jsonl", "--path", "software"))
    only = detect(clip, tmp_path / "dog.jsonl", "--path", "software", "--classes", "dog,PERSON")
    assert not any(line["detections"] for line in only)
    cats = detect(clip, tmp_path / "cat.jsonl", "--path", "software", "--classes", "cat")
    assert {d["name"] for line in cats for d in line["detections"]} == {"cat"}


def test_the_api_runs_tiles_and_reports_what_they_cost(tmp_path):
    import zerocopy

    clip = tmp_path / "astronaut.mp4"
    write_photo_clip(clip, "astronaut", "rocket", 0.2, frames=4)
    with zerocopy.Detector(model="objects", tiles=1, classes=["person"], path="software") as det:
        people = [r.detections for r in det.run(clip)]
        report = det.report()
    assert all(len(d) == 1 for d in people)  # missed without tiles (SMALL), only people kept (classes)
    assert report["config"]["tiles"] == 1
    assert report["tiles"]["regions"] == 2 * len(people)  # two square tiles of a 640×360 frame
    assert report["tiles"]["per_region_inference_ms"]["mean_ms"] > 0


def test_anonymise_hides_its_labels_whatever_classes_reports(tmp_path):
    """Issue 26, item 6: `--classes Car --anonymise Person` wrote every frame with the person in clear (the class
    filter dropped the boxes before anything was hidden). The Person boxes are detected for hiding, hidden, and
    never reported: the JSON Lines hold only the classes asked."""
    import av

    clip = tmp_path / "astronaut.mp4"
    write_photo_clip(clip, "astronaut", "rocket", 0.6)
    plain = detect(clip, tmp_path / "plain.jsonl")  # every class: where the model finds the person
    persons = [[d["box"] for d in line["detections"] if d["name"] == "person"] for line in plain]
    assert sum(map(bool, persons)) >= 0.9 * len(plain)
    out = tmp_path / "private.mp4"
    private = detect(clip, tmp_path / "private.jsonl", "--classes", "car", "--anonymise", "person",
                     "--anonymise-style", "fill", "--output", out)
    assert len(private) == len(plain) and all(d["name"] == "car" for line in private for d in line["detections"])
    with av.open(str(clip)) as a, av.open(str(out)) as b:
        pairs = list(zip(a.decode(video=0), b.decode(video=0), strict=True))
    for (before, after), boxes in zip(pairs, persons, strict=True):
        for box in boxes:  # the middle half of each Person box: the photo before, black (`fill`) after
            x1, y1, x2, y2 = (int(v) for v in box)
            mx, my = (x2 - x1) // 4, (y2 - y1) // 4
            region = np.s_[y1 + my : y2 - my, x1 + mx : x2 - mx]
            assert before.to_ndarray(format="gray")[region].mean() > 40
            assert after.to_ndarray(format="gray")[region].mean() < 20  # black, give or take H.264


def test_the_api_hides_anonymised_labels_in_its_images_and_reports_only_the_classes(tmp_path):
    """Issue 26, item 6, from Python: `Detector(classes=…, anonymise=…)`: the results hold only `classes`, the
    images (`keep_images`) are hidden where the `anonymise` labels were found."""
    import zerocopy

    clip = tmp_path / "astronaut.mp4"
    write_photo_clip(clip, "astronaut", "rocket", 0.6)
    with zerocopy.Detector(model="objects", keep_images=True) as det:
        plain = list(det.run(clip))
    with zerocopy.Detector(model="objects", classes=["car"], anonymise=["person"], anonymise_style="fill",
                           keep_images=True) as det:
        private = list(det.run(clip))
        assert det.report()["detections"] == sum(len(r.detections) for r in private)
    with zerocopy.Detector(model="objects", anonymise="person", anonymise_style="fill", keep_images=True) as det:
        own = list(det.run(clip, per_input=[{"classes": ["car"]}]))  # an input's own classes: serve's cameras
    person = plain[0].names.index("person")
    hidden = 0
    for before, *afters in zip(plain, private, own, strict=True):
        for box in before.detections.xyxy[before.detections.labels == person]:
            x1, y1, x2, y2 = (int(v) for v in box)
            mx, my = (x2 - x1) // 4, (y2 - y1) // 4
            region = np.s_[y1 + my : y2 - my, x1 + mx : x2 - mx]
            assert before.image[region].mean() > 40
            for after in afters:
                assert after.image[region].max() == 0  # black: `fill`
            hidden += 1
        for after in afters:
            assert not np.isin(after.detections.labels, [person]).any()
    assert hidden >= 0.9 * len(plain)
