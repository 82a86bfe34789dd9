"""`[http]` of `zerocopy serve`'s config and the HTTP side's pure parts (issue 26): the Host names, the token
(from the environment or a file, never shown), `allow_anonymous`, `health_requires_broker`; a listen beyond
the loopback with neither a token nor `allow_anonymous` refused at `--check` and by the server itself; the
Host header and the Authorization parsed; /health's states. No server is started here (tests/e2e/
test_serve_http.py has them)."""

import base64
from pathlib import Path

import pytest

from zerocopy.cli import main
from zerocopy.errors import ZeroCopyError
from zerocopy.serve.config import ServeConfigError, load_config
from zerocopy.serve.gate import Gate
from zerocopy.serve.http import StatusServer
from zerocopy.serve.http_config import HttpConfig, is_loopback
from zerocopy.serve.routes import BEHIND, Health, health

TOKEN = "http-t0ken-never-shown-42"
CAMERA = '[cameras.a]\nurl = "rtsp://a.lan/1"\n'


def write(tmp_path: Path, http: str) -> Path:
    path = tmp_path / "serve.toml"
    path.write_text(f"[http]\n{http}\n{CAMERA}")
    return path


def problems(tmp_path: Path, http: str, env: dict | None = None) -> list[str]:
    with pytest.raises(ServeConfigError) as e:
        load_config(write(tmp_path, http), env=env or {})
    assert all("\n" not in p for p in e.value.problems)
    return e.value.problems


def test_the_new_keys_with_a_token_from_the_environment_or_a_file(tmp_path):
    text = ('listen = "0.0.0.0:8737"\ntoken = "${HTTP_TOKEN}"\nhosts = ["Box1.LAN", "[fd00::7]", "10.0.0.7."]\n'
            'health_requires_broker = true')
    config = load_config(write(tmp_path, text), env={"HTTP_TOKEN": TOKEN})
    http = config.http
    assert (http.listen, http.token, http.allow_anonymous, http.health_requires_broker) == \
        ("0.0.0.0:8737", TOKEN, False, True)
    assert http.hosts == ("box1.lan", "fd00::7", "10.0.0.7")
    assert TOKEN not in repr(config)
    (tmp_path / "token").write_text(TOKEN + "\n")
    assert load_config(write(tmp_path, 'token = "${file:token}"'), env={}).http.token == TOKEN
    assert load_config(tmp_path / "serve.toml", env={}).http.listen == "127.0.0.1:8737"
    assert load_config(write(tmp_path, ""), env={}).http == HttpConfig()


@pytest.mark.parametrize("listen", ["0.0.0.0:8737", "[::]:8737", "192.168.1.5:8737", "box1.lan:8737"])
def test_listening_beyond_the_loopback_needs_a_token_or_allow_anonymous(tmp_path, listen):
    found = problems(tmp_path, f'listen = "{listen}"')
    assert found == [f"[http] listen: {listen} reaches beyond the loopback: set token (a bearer token or basic-auth "
                     "password, e.g. token = \"${file:/run/secrets/zerocopy-http}\") or allow_anonymous = true"]
    assert load_config(write(tmp_path, f'listen = "{listen}"\nallow_anonymous = true'), env={}).http.allow_anonymous
    assert load_config(write(tmp_path, f'listen = "{listen}"\ntoken = "{TOKEN}"'), env={}).http.token == TOKEN


@pytest.mark.parametrize("listen", ["127.0.0.1:8737", "127.0.0.2:0", "localhost:8737", "[::1]:8737", ":8737"])
def test_a_loopback_listen_needs_no_token(tmp_path, listen):
    assert load_config(write(tmp_path, f'listen = "{listen}"'), env={}).http.token is None


def test_bad_http_keys_are_one_line_each_and_never_show_the_token(tmp_path):
    short = "short-token"
    found = problems(tmp_path, 'token = "${T}"\nhosts = ["http://box1.lan/", "ok.lan", "a b"]\n'
                               'allow_anonymous = "yes"\nhealth_requires_broker = 1\nlisten = "0.0.0.0:1"\nport = 80',
                     env={"T": short})
    assert not any(short in p for p in found), found
    expected = ["[http] unknown key 'port'", "[http] allow_anonymous must be true or false",
                "[http] health_requires_broker must be true or false",
                "[http] hosts: 'http://box1.lan/' is not a host name", "[http] hosts: 'a b' is not a host name",
                "[http] token must be at least 16 printable ASCII characters"]
    for text in expected:
        assert sum(p.startswith(text) for p in found) == 1, (text, found)
    assert len(found) == len(expected), found
    assert problems(tmp_path, f'token = "{TOKEN}"\nallow_anonymous = true') == [
        "[http] allow_anonymous = true and a token: the token would be required; keep one of them"]
    assert problems(tmp_path, 'hosts = "box1.lan"') == [
        "[http] hosts must be a list of host names (e.g. hosts = [\"box1.lan\"])"]


def test_a_token_that_cannot_be_filled_in_is_said_once(tmp_path):
    """The missing variable is the problem; the listen beyond the loopback is not said to lack a token too."""
    assert problems(tmp_path, 'listen = "0.0.0.0:8737"\ntoken = "${NOT_SET}"') == [
        "[http] token: the environment variable NOT_SET is not set"]


def test_check_refuses_an_open_listen_without_token(tmp_path, capsys):
    path = write(tmp_path, 'listen = "0.0.0.0:8737"')
    assert main(["serve", str(path), "--check"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"zerocopy: {path}: [http] listen: 0.0.0.0:8737 reaches beyond the loopback: set token (a bearer token or "
        "basic-auth password, e.g. token = \"${file:/run/secrets/zerocopy-http}\") or allow_anonymous = true"]


HEALTHY = Health(True, "ok")


class Source:
    latest = False

    def __init__(self, ok=HEALTHY, stats=None):
        self.ok, self.stats = ok, stats

    def healthy(self):
        return self.ok

    def publisher_stats(self):
        return self.stats


def test_the_server_refuses_to_start_beyond_the_loopback_without_a_token_or_allow_anonymous():
    with pytest.raises(ZeroCopyError, match="reaches beyond the loopback"):
        StatusServer("0.0.0.0:0", Source()).start()  # refused before anything is bound
    assert StatusServer("0.0.0.0:0", Source(), HttpConfig(allow_anonymous=True)).access == \
        "HTTP on 0.0.0.0:0: anonymous access allowed ([http] allow_anonymous = true)"
    assert StatusServer("127.0.0.1:0", Source()).access == "HTTP on 127.0.0.1:0: loopback only, no token"
    assert is_loopback("127.1.2.3") and is_loopback("LOCALHOST") and not is_loopback("0.0.0.0")


def test_the_host_names_served():
    server = StatusServer("192.168.1.5:8737", Source(), HttpConfig(hosts=("box1.lan",), token=TOKEN))
    assert server.hosts() == {"localhost", "127.0.0.1", "::1", "192.168.1.5", "box1.lan"}
    assert StatusServer("0.0.0.0:8737", Source(), HttpConfig(allow_anonymous=True)).hosts() == \
        {"localhost", "127.0.0.1", "::1"}  # every address: the one a request came in on is allowed as it comes


def scope(host: bytes | None, auth: bytes | None = None, server: str = "127.0.0.1") -> dict:
    headers = [(b"host", host)] if host is not None else []
    headers += [(b"authorization", auth)] if auth is not None else []
    return {"headers": headers, "server": (server, 8737)}


def test_the_gate_reads_the_host_header_and_the_token():
    gate = Gate({"localhost", "127.0.0.1", "::1", "box1.lan"}, None)
    for host in (b"localhost", b"LOCALHOST:8737", b"127.0.0.1:1", b"[::1]:8737", b"[::1]", b"box1.lan.",
                 b"192.168.1.5:8737"):  # the last: the address the request came in on
        assert gate.refuse(scope(host, server="192.168.1.5")) is None, host
    assert gate.refuse(scope(b"192.168.1.5:8737", server="::ffff:192.168.1.5")) is None  # IPv4 on a [::] listen
    for host, status in ((b"evil.example", 421), (b"box1.lan.evil.example:80", 421), (b"", 400), (None, 400),
                         (b"localhost:http", 400), (b"[::1", 400), (b"[::1]x", 400), (b"a b", 400)):
        refused = gate.refuse(scope(host))
        assert refused is not None and refused.status == status, host
    gate = Gate({"localhost"}, TOKEN)
    basic = b"Basic " + base64.b64encode(f"u:{TOKEN}".encode())
    for auth in (f"Bearer {TOKEN}".encode(), f"bearer  {TOKEN} ".encode(), basic):
        assert gate.refuse(scope(b"localhost", auth)) is None, auth
    for auth in (None, b"", TOKEN.encode(), f"Bearer {TOKEN[:-1]}".encode(), b"Basic " + base64.b64encode(
            TOKEN.encode()), b"Basic %%%", f"Token {TOKEN}".encode()):
        refused = gate.refuse(scope(b"localhost", auth))
        assert refused is not None and refused.status == 401 and TOKEN.encode() not in refused.body, auth
        assert refused.headers == ((b"www-authenticate", b'Basic realm="zerocopy", charset="UTF-8"'),)


def stats(connected: bool, queued: int, dropped: int = 0) -> dict:
    return {"connected": connected, "queued": queued, "dropped": dropped, "last_error": None}


def test_health_states():
    assert health(Source()) == (200, {"status": "ok", "reason": "ok", "broker": None})
    assert health(Source(stats=stats(True, 0))) == (200, {"status": "ok", "reason": "ok", "broker": {
        "connected": True, "queued": 0, "dropped": 0}})
    status, body = health(Source(stats=stats(False, 0)))
    assert (status, body["status"], body["reason"]) == \
        (200, "degraded", "the broker is not connected (no answer yet); 0 message(s) queued, 0 dropped")
    assert health(Source(stats=stats(False, 0)), requires_broker=True).status == 503
    assert health(Source(stats=stats(True, 3))).value["status"] == "ok"  # in flight, awaiting the broker's ack
    assert health(Source(stats=stats(True, BEHIND))).value["status"] == "degraded"  # behind
    status, body = health(Source(ok=Health(False, "every camera failed"), stats=stats(False, 9)), requires_broker=False)
    assert (status, body["status"], body["reason"]) == (503, "unhealthy", "every camera failed")
