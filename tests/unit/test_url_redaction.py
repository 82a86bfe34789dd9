"""zerocopy.redaction.redact: secrets masked by a URL's shape, not by a list of key names (issue 36): userinfo,
every query value and every `key=value` part of the path whose key is not plainly harmless (`HARMLESS_KEYS`)."""

from __future__ import annotations

import pytest

from zerocopy.names import camera_name
from zerocopy.redaction import redact, redact_text

SECRET = "Xq7-s3cret"


@pytest.mark.parametrize(("source", "shown"), [
    # Foscam: the credentials in keys no list of credential names had
    (f"http://192.168.1.5:88/cgi-bin/CGIProxy.fcgi?cmd=snapPicture2&loginuse=admin&loginpas={SECRET}",
     "http://192.168.1.5:88/cgi-bin/CGIProxy.fcgi?cmd=***&loginuse=***&loginpas=***"),
    (f"http://192.168.1.5/videostream.cgi?user=admin&pwd={SECRET}&resolution=32&rate=0",
     "http://192.168.1.5/videostream.cgi?user=***&pwd=***&resolution=32&rate=0"),
    # XMEye: the credentials in the path, `key=value` parts joined by `_` (or `&`)
    (f"rtsp://192.168.1.6:554/user=admin_password={SECRET}_channel=1_stream=0.sdp",
     "rtsp://192.168.1.6:554/user=***_password=***_channel=1_stream=0.sdp"),
    (f"rtsp://192.168.1.6:554/user=admin&password={SECRET}&channel=1&stream=0.sdp?real_stream",
     "rtsp://192.168.1.6:554/user=***&password=***&channel=1&stream=0.sdp?real_stream"),
    (f"rtsp://192.168.1.6/user=admin_password=a_{SECRET}_channel=2", "rtsp://192.168.1.6/user=***_password=***_channel=2"),
    # Dahua and Hikvision: the channel and stream stay readable, the password does not
    (f"rtsp://admin:{SECRET}@192.168.1.7/cam/realmonitor?channel=1&subtype=0",
     "rtsp://admin:***@192.168.1.7/cam/realmonitor?channel=1&subtype=0"),
    (f"rtsp://admin:{SECRET}@192.168.1.8:554/Streaming/Channels/101?transportmode=unicast&rtsp_transport=tcp",
     "rtsp://admin:***@192.168.1.8:554/Streaming/Channels/101?transportmode=***&rtsp_transport=tcp"),
    # a key nobody listed is masked; a fragment's parameters too; an empty value hides nothing
    (f"https://cam.lan/live.m3u8?X-Amz-Credential={SECRET}&Fps=25", "https://cam.lan/live.m3u8?X-Amz-Credential=***&Fps=25"),
    (f"https://cam.lan/x#access_token={SECRET}", "https://cam.lan/x#access_token=***"),
    ("rtsp://cam.lan/x?password=&channel=3", "rtsp://cam.lan/x?password=&channel=3"),
    # SRT: the access control syntax shows its resource and user, masks its password; another stream id is masked
    (f"srt://127.0.0.1:9000?streamid=#!::r=live/cam,u=bob,p={SECRET}&latency=200",
     "srt://127.0.0.1:9000?streamid=#!::r=live/cam,u=bob,p=***&latency=200"),
    (f"srt://127.0.0.1:9000?streamid={SECRET}&passphrase={SECRET}", "srt://127.0.0.1:9000?streamid=***&passphrase=***"),
    # what is not a URL, or has no such part, is left alone
    ("rtsp://cam.lan/h264/ch1/main/av_stream", "rtsp://cam.lan/h264/ch1/main/av_stream"),
    # a `key_value` segment of the path, a bare query value (issue 36's review): masked unless plainly a name
    ("rtsp://cam.lan/live/user_admin/password_s3cret", "rtsp://cam.lan/live/user_***/password_***"),
    ("http://cam.lan/snap.cgi?YWRtaW46czNjcmV0", "http://cam.lan/snap.cgi?***"),
    ("http://cam.lan/live/front_door.m3u8?real_stream", "http://cam.lan/live/front_door.m3u8?real_stream"),
    ("clip=1.mp4", "clip=1.mp4"), ("/videos/user=a.mp4", "/videos/user=a.mp4"),
])
def test_a_secret_is_masked_by_where_it_is_in_the_url(source, shown):
    assert redact(source) == shown
    assert redact_text(f"camera front: cannot open {source}: 404.") == f"camera front: cannot open {shown}: 404."
    assert SECRET not in redact(source)


def test_harmless_keys_are_few_and_written_as_compared():
    from zerocopy.redaction import HARMLESS_KEYS

    assert all(k == k.lower() and "_" not in k and "-" not in k for k in HARMLESS_KEYS)
    assert not HARMLESS_KEYS & {"user", "usr", "id", "key", "code", "sig", "session", "streamid", "passphrase"}


def test_a_name_made_from_a_url_never_holds_its_secret():
    """A camera's default name (a topic level) is its URL's last part, taken from the redacted URL."""
    assert camera_name(f"rtsp://h/user=admin_password={SECRET}_channel=1_stream=0.sdp") == \
        "user__password__channel_1_stream_0"
