"""serve's config: every unknown key of every table said, one line each, with the closest known key, and a key as
Frigate writes it with zerocopy's name for it (issue 37); Frigate's `[cameras.X.snapshots]`, `.motion` and `.record`
tables answered about what they are."""

from pathlib import Path

import pytest

from zerocopy.serve.config import ServeConfigError, load_config

# a Frigate user's keys, written in serve's TOML
FRIGATE_IN_TOML = """
colour = "red"
[mqtt]
host = "127.0.0.1"
[publish]
url = "mqtt://127.0.0.1:1883/zerocopy"
host = "127.0.0.1"
topic_prefix = "frigate"
[http]
lisen = "127.0.0.1:0"
port = 5000
[storage]
path = "{store}"
days = 3
[homeassistant]
discovery_prefix = "ha"
[defaults]
fps = 5
[cameras.front]
url = "rtsp://front.lan/1"
model = "objects"
objects = {{ track = ["person"] }}
ffmpeg = {{ inputs = [] }}
mask = "0,0,1,0,1,1"
treshold = 0.5
[cameras.front.snapshots]
enabled = true
[cameras.front.motion]
threshold = 30
[cameras.front.record]
enabled = true
[cameras.front.zones.door]
coordinates = "0,0,1,0,1,1"
objects = ["person"]
inertia = 3
loitering_time = 4
[cameras.front.zones.yard]
points = "0,0,1,0,1,1"
labls = ["person"]
[cameras.front.lines.gate]
points = "0,0,1,1"
objects = ["person"]
"""


@pytest.fixture
def found(tmp_path: Path) -> list[str]:
    (tmp_path / "serve.toml").write_text(FRIGATE_IN_TOML.format(store=tmp_path / "store"))
    with pytest.raises(ServeConfigError) as e:
        load_config(tmp_path / "serve.toml", env={})
    assert all("\n" not in p for p in e.value.problems)
    return e.value.problems


def line(found: list[str], start: str) -> str:
    lines = [p for p in found if p.startswith(start)]
    assert len(lines) == 1, (start, found)
    return lines[0]


def test_every_unknown_key_of_every_table_is_a_line_with_the_closest_key_or_zerocopys_name(found):
    expected = {  # each line's start → what it suggests
        "unknown key 'colour'": None,
        "unknown key 'mqtt'": "(did you mean [publish] url? zerocopy's name for Frigate's mqtt",
        "[publish] unknown key 'host'": "(did you mean url? zerocopy's name for Frigate's mqtt.host",
        "[publish] unknown key 'topic_prefix'": "(did you mean url? zerocopy's name for Frigate's mqtt.topic_prefix",
        "[http] unknown key 'lisen'": "(did you mean listen?)",
        "[http] unknown key 'port'": "[http] takes listen,",
        "[storage] unknown key 'days'": "(did you mean max_days? zerocopy's name for Frigate's record.retain.days)",
        "[homeassistant] unknown key 'discovery_prefix'": "(did you mean prefix?",
        "[defaults] unknown key 'fps'": "(did you mean detect_fps? zerocopy's name for Frigate's detect.fps)",
        "[cameras.front] unknown key 'objects'": "(did you mean classes? zerocopy's name for Frigate's objects.track)",
        "[cameras.front] unknown key 'ffmpeg'": "(did you mean url and record_url?",
        "[cameras.front] unknown key 'mask'": "(did you mean motion_mask? zerocopy's name for Frigate's motion.mask)",
        "[cameras.front] unknown key 'treshold'": "(did you mean threshold?)",
        # every unknown key of a zone, not only its first
        "[cameras.front.zones.door] unknown key 'coordinates'": "(did you mean points?",
        "[cameras.front.zones.door] unknown key 'objects'": "(did you mean labels?",
        "[cameras.front.zones.door] unknown key 'inertia'": "(did you mean min_frames?",
        "[cameras.front.zones.door] unknown key 'loitering_time'": "(did you mean loiter_s?",
        "[cameras.front.zones.yard] unknown key 'labls'": "(did you mean labels?)",
        "[cameras.front.lines.gate] unknown key 'objects'": "(did you mean labels?",
    }
    for start, hint in expected.items():
        said = line(found, start)
        assert hint is None or hint in said, (hint, said)
    assert line(found, "[cameras.front.zones.door] unknown key 'inertia'").endswith(
        "a zone takes points, labels, min_frames, loiter_s")


def test_frigates_snapshots_motion_and_record_tables_say_what_serve_has_instead(found):
    snapshots = line(found, "[cameras.front] snapshots:")
    assert "snapshot" in snapshots.partition(":")[2] and "[storage] folder" in snapshots
    assert "snapshot_interval" in snapshots and "[http] latest = false" in snapshots
    assert "motion_threshold" in line(found, "[cameras.front] motion is true or false here")
    assert "pre_capture" in line(found, "[cameras.front] record is true or false here")


def test_nothing_else_is_said(found):
    assert len(found) == 22, found


def test_each_frigate_name_is_a_key_serve_takes_or_a_table_s():
    """A suggestion names a key that exists (or `[table] key`), never one serve would refuse in turn."""
    from zerocopy.serve.camera_config import CAMERA_KEYS, CAMERA_SETTINGS
    from zerocopy.serve.checks import FRIGATE_KEYS
    from zerocopy.serve.config import PUBLISH_KEYS, TOP_KEYS
    from zerocopy.serve.storage_config import STORAGE_KEYS

    known = {"top": TOP_KEYS, "camera": CAMERA_KEYS + CAMERA_SETTINGS, "zone": ("points", "labels", "min_frames",
             "loiter_s"), "line": ("points", "labels"), "publish": PUBLISH_KEYS, "storage": STORAGE_KEYS,
             "homeassistant": ("prefix",)}
    for table, names in FRIGATE_KEYS.items():
        for key, (name, _) in names.items():
            assert key not in known[table], (table, key)
            for part in name.split(" and "):
                assert part.startswith("[") or part in known[table], (table, key, name)


def test_the_docs_show_these_lines_as_serve_says_them(found):
    """docs/serve.md's example of Frigate's keys in TOML: each line is one `--check` gives for them."""
    import re

    doc = (Path(__file__).resolve().parents[3] / "docs" / "serve.md").read_text()
    shown = re.findall(r"^zerocopy: cameras\.toml: (.*Frigate's.*|\[cameras\.front\] snapshots: .*)$", doc, re.M)
    assert len(shown) == 5
    for text in shown:
        assert text in found, text
