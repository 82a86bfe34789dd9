"""MqttTarget.parse: the `--publish` URL read into broker, credentials, TLS and topic prefix; the password
never shown."""

from __future__ import annotations

import pytest

from zerocopy.errors import ConfigError, ZeroCopyError
from zerocopy.publish import PASSWORD_ENV, MqttTarget

SECRET = "s3cr3t!pw"


@pytest.fixture(autouse=True)
def no_env_password(monkeypatch):
    monkeypatch.delenv(PASSWORD_ENV, raising=False)


def test_defaults():
    t = MqttTarget.parse("mqtt://broker.lan")
    assert (t.scheme, t.host, t.port, t.prefix, t.user, t.password, t.ca, t.tls) == \
        ("mqtt", "broker.lan", 1883, "zerocopy", None, None, None, False)
    assert str(t) == "mqtt://broker.lan:1883/zerocopy"


def test_mqtts_default_port_and_tls():
    t = MqttTarget.parse("mqtts://broker.lan/")
    assert (t.port, t.tls, t.prefix) == (8883, True, "zerocopy")


def test_port_prefix_and_topics():
    t = MqttTarget.parse("mqtt://10.0.0.5:1884/home/cams/")
    assert (t.host, t.port, t.prefix) == ("10.0.0.5", 1884, "home/cams")
    assert t.events_topic("door") == "home/cams/door/events"
    assert t.detections_topic("door") == "home/cams/door/detections"
    assert t.availability_topic("nuc") == "home/cams/available/nuc"
    # serve's [publish] frigate_events (a Frigate config sets it): every camera's events on Frigate's one topic
    assert MqttTarget.parse("mqtt://h/frigate", frigate_events=True).events_topic("door") == "frigate/events"


def test_ipv6_host():
    t = MqttTarget.parse("mqtt://[::1]:1999/x")
    assert (t.host, t.port) == ("::1", 1999)
    assert str(t) == "mqtt://[::1]:1999/x"


def test_user_and_password_percent_decoded():
    t = MqttTarget.parse("mqtt://al%40ice:p%2Fa%3Ass%40w@host/zc")
    assert (t.user, t.password) == ("al@ice", "p/a:ss@w")
    assert str(t) == "mqtt://al@ice:***@host:1883/zc"


def test_password_with_unencoded_at_sign():
    t = MqttTarget.parse(f"mqtt://bob:{SECRET}@x@host/zc")
    assert (t.user, t.password, t.host) == ("bob", f"{SECRET}@x", "host")


def test_password_from_the_environment(monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, SECRET)
    t = MqttTarget.parse("mqtt://bob@host/zc")
    assert (t.user, t.password) == ("bob", SECRET)
    assert SECRET not in str(t) and SECRET not in repr(t)
    assert str(t) == "mqtt://bob:***@host:1883/zc"


def test_url_password_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, "from-env")
    assert MqttTarget.parse(f"mqtt://bob:{SECRET}@host").password == SECRET


def test_environment_unused_without_a_user(monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, SECRET)
    t = MqttTarget.parse("mqtt://host")
    assert (t.user, t.password) == (None, None)


def test_user_without_password():
    t = MqttTarget.parse("mqtt://bob@host")
    assert (t.user, t.password) == ("bob", None)
    assert str(t) == "mqtt://bob@host:1883/zerocopy"


def test_password_never_in_str_or_repr():
    t = MqttTarget.parse(f"mqtts://bob:{SECRET}@host:8884/a/b")
    assert SECRET not in str(t) and SECRET not in repr(t)
    assert str(t) == "mqtts://bob:***@host:8884/a/b"


def test_ca_file(ca_bundle):
    assert MqttTarget.parse("mqtts://host", ca=ca_bundle).ca == ca_bundle


@pytest.mark.parametrize("text", ["-----BEGIN CERTIFICATE-----\n", "not a certificate\n", ""])
def test_a_ca_file_that_holds_no_certificate_is_refused(tmp_path, text):
    """Read as the TLS connection reads it (issue 26, item 9): refused when parsed, not when first connecting."""
    ca = tmp_path / "ca.pem"
    ca.write_text(text)
    with pytest.raises(ConfigError) as e:
        MqttTarget.parse(f"mqtts://bob:{SECRET}@host", ca=str(ca))
    assert str(e.value).startswith(f"MQTT CA certificate {ca}: not a PEM CA certificate (")
    assert SECRET not in str(e.value) and "\n" not in str(e.value) and "_ssl.c" not in str(e.value)


def test_frozen():
    t = MqttTarget.parse("mqtt://host")
    with pytest.raises(AttributeError):
        t.port = 1  # type: ignore[misc]


@pytest.mark.parametrize(("url", "says"), [
    (f"http://bob:{SECRET}@host/zc", "use mqtt://"),
    (f"tcp://bob:{SECRET}@host", "use mqtt://"),
    ("host:1883", "use mqtt://"),
    (f"mqtt://bob:{SECRET}@", "no host"),
    (f"mqtt://bob:{SECRET}@:1883/zc", "no host"),
    (f"mqtt://bob:{SECRET}@host:abc/zc", "not a number"),
    (f"mqtt://bob:{SECRET}@host:70000/zc", "out of range"),
    (f"mqtt://bob:{SECRET}@host:0/zc", "port 0"),
    (f"mqtt://bob:{SECRET}@host/zc/+/x", "wildcard"),
    (f"mqtt://bob:{SECRET}@host/zc/#", "no ? or #"),
    (f"mqtt://bob:{SECRET}@host/zc//x", "empty level"),
    (f"mqtt://bob:{SECRET}@host/zc?qos=2", "no ? or #"),
    (f"mqtt://bob:{SECRET}@host/zc#frag", "no ? or #"),
    (f"mqtt://:{SECRET}@host/zc", "needs a user"),
    ("mqtt://bob:pa/ss@host/zc", "percent-encode"),  # an unencoded / ends the authority
])
def test_bad_urls_one_line_no_password(url, says):
    with pytest.raises(ConfigError) as e:
        MqttTarget.parse(url)
    text = str(e.value)
    assert says in text
    assert "\n" not in text
    assert SECRET not in text and "pa/ss" not in text
    assert e.value.setting == "publish"
    assert isinstance(e.value, ZeroCopyError)


def test_ca_needs_mqtts(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    with pytest.raises(ConfigError, match="mqtts://") as e:
        MqttTarget.parse(f"mqtt://bob:{SECRET}@host", ca=str(ca))
    assert SECRET not in str(e.value)


def test_missing_ca_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file") as e:
        MqttTarget.parse(f"mqtts://bob:{SECRET}@host", ca=str(tmp_path / "missing.pem"))
    assert SECRET not in str(e.value) and "\n" not in str(e.value)


def test_a_port_out_of_range_is_said_alone():
    with pytest.raises(ConfigError) as e:
        MqttTarget.parse("mqtt://127.0.0.1:99999/x")
    assert str(e.value) == "MQTT URL mqtt://127.0.0.1:99999/x: port out of range (1-65535)"
