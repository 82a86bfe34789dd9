"""zerocopy.sources: what a source is (a file, a network URL, a V4L2 camera) and how it is shown: redacted, and
with the values `masking` holds (serve's secrets filled in from the environment or files) masked wherever they are."""

from __future__ import annotations

import threading

import pytest

from zerocopy.redaction import mask_secrets, masking, redact, redact_text
from zerocopy.sources import source_kind

PATH_SECRET, QUERY_SECRET, USER_SECRET = "p4th-s3cret", "qu3ry-s3cret", "us3r-s3cret"


def test_values_held_by_masking_are_masked_in_a_url_wherever_they_are():
    """Issue 26, item 5: a secret in a URL's path or in a query key no rule knows as a credential showed."""
    url = f"rtsp://{USER_SECRET}:pw@127.0.0.1:8554/{PATH_SECRET}/stream?channel={QUERY_SECRET}&token=t0ken"
    assert redact(url) == f"rtsp://{USER_SECRET}:***@127.0.0.1:8554/{PATH_SECRET}/stream?channel={QUERY_SECRET}" \
                          "&token=***"  # the rules alone
    with masking([PATH_SECRET, QUERY_SECRET, USER_SECRET]):
        assert redact(url) == "rtsp://***:***@127.0.0.1:8554/***/stream?channel=***&token=***"
        said = redact_text(f"camera front: cannot open {url}: 404; id {QUERY_SECRET} (from {PATH_SECRET}.)")
        assert said == "camera front: cannot open rtsp://***:***@127.0.0.1:8554/***/stream?channel=***&token=***: " \
                       "404; id *** (from ***.)"
    assert redact(url).endswith(f"channel={QUERY_SECRET}&token=***")  # only while the block runs


def test_the_longest_value_is_masked_whole_and_short_values_never():
    with masking(["abcdef", "abcdefghij", "ab"]):
        assert mask_secrets("x abcdefghij y abcdef z ab") == "x *** y *** z ab"  # 2 characters would mask words


def test_blocks_nest_and_a_value_stays_masked_while_any_block_holds_it():
    with masking(["shared-secret", "outer-only"]):
        with masking(["shared-secret", "inner-only"]):
            assert mask_secrets("shared-secret outer-only inner-only") == "*** *** ***"
        assert mask_secrets("shared-secret outer-only inner-only") == "*** *** inner-only"
    assert mask_secrets("shared-secret outer-only") == "shared-secret outer-only"


def test_masking_from_threads_at_once_leaves_nothing_held():
    def hold(n: int) -> None:
        for _ in range(200):
            with masking([f"thread-secret-{n}", "common-secret"]):
                assert mask_secrets("common-secret") == "***"

    threads = [threading.Thread(target=hold, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mask_secrets("common-secret thread-secret-1") == "common-secret thread-secret-1"


@pytest.mark.parametrize(("source", "kind"), [
    ("/dev/video0", "device"), ("/dev/v4l/by-id/usb-cam-video-index0", "device"), ("/dev/./video2", "device"),
    ("/dev/v4l/../../etc/passwd", "file"), ("/dev/video0/../../etc/shadow", "file"), ("/dev//v4l/../sda", "file"),
    ("/dev/videos/../sda", "file"), ("clip.mp4", "file"), ("rtsp://cam/dev/video0", "network")])
def test_a_device_is_judged_on_its_normalised_path(source, kind):
    """Issue 26, item 9: `/dev/v4l/../../etc/passwd` passed serve's "cameras only" check by how it began."""
    assert source_kind(source) == kind
