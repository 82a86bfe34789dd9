"""The container recipe for `zerocopy serve` (scripts/container/Dockerfile) against the project's own tested
scripts and docs.

A consistency test, not a build: no container runtime works on the machines this project is built and tested
on, so the image is never built here (docs/hardware.md, "A container for serve"). What it does check is that the
recipe cannot drift silently from the steps that are tested (make setup-gpu, the VA stack root, the host test,
doctor's advice, serve's HTTP rules): every file it copies is in the checkout and not ignored; it runs `make
setup-gpu` instead of duplicating its FFmpeg and PyAV recipe, and keeps the FFmpeg prefix where PyAV's rpath
points; its distribution is one a CI target tests; it installs the packages doctor names; the VA stack root's
packages are all accounted for; and its health check gets through serve's own Host and token check with the
config docs/hardware.md gives. Whether the packages exist in Debian is not checked here (no network): they are
checked against the names docs/hardware.md and doctor use.
"""

from __future__ import annotations

import json
import re
import shlex
from fnmatch import fnmatch
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "scripts" / "container" / "Dockerfile"
HARDWARE = ROOT / "docs" / "hardware.md"
# In the VA stack root but not in the image: the ffmpeg command line (the tests make their clips with it; zerocopy
# itself reads and writes video through PyAV).
NOT_IN_THE_IMAGE = {"ffmpeg"}


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: continuation lines joined, comments left out."""
    out, current = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if line.lstrip().startswith("#") or (not current and not line.strip()):
            continue
        current += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            op, _, rest = current.strip().partition(" ")
            out.append((op.upper(), rest.strip()))
            current = ""
    return out


def all_of(op: str) -> list[str]:
    return [rest for o, rest in instructions() if o == op]


def comments() -> str:
    return "\n".join(line for line in DOCKERFILE.read_text().splitlines() if line.lstrip().startswith("#"))


def bash_array(script: str, name: str) -> list[str]:
    text = (ROOT / "scripts" / script).read_text()
    body = re.search(rf"^{name}=\((.*?)\)", text, re.M | re.S)[1]
    return [w for line in body.splitlines() for w in line.split("#")[0].split()]


def arg_default(name: str) -> str:
    return next(rest.partition("=")[2].strip('"') for rest in all_of("ARG") if rest.partition("=")[0] == name)


def env() -> dict[str, str]:
    return dict(part.split("=", 1) for rest in all_of("ENV") for part in shlex.split(rest))


def apt_installed() -> set[str]:
    names = set()
    for run in all_of("RUN"):
        for m in re.finditer(r"apt-get install ([^&]*)", run):
            names |= {w for w in m[1].split() if not w.startswith("-")}
    return names


def section(doc: str, title: str) -> str:
    start = doc.index(f"## {title}")
    end = doc.find("\n## ", start + 1)
    return doc[start:end if end > 0 else None]


def the_setup_gpu_run() -> str:
    runs = [r for r in all_of("RUN") if "make setup-gpu" in r]
    assert len(runs) == 1, "the image is set up by one `make setup-gpu`"
    return runs[0]


def test_every_file_it_copies_is_in_the_checkout_and_not_ignored():
    ignore = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    for heavy in (".git", ".venv", ".venv-gpu"):  # the build context is the checkout's root: keep them out of it
        assert heavy in ignore, f".dockerignore should leave out {heavy}"
    copies = all_of("COPY")
    assert copies
    for rest in copies:
        *sources, _ = shlex.split(rest)
        for src in sources:
            assert not src.startswith("--"), f"COPY {rest}: from the checkout only"
            assert (ROOT / src).exists(), f"COPY {src}: not in the checkout"
            assert not any(fnmatch(src.rstrip("/"), p.rstrip("/")) for p in ignore), f"COPY {src} is ignored"


def test_it_copies_everything_make_setup_gpu_reads():
    copied = {src.rstrip("/") for rest in all_of("COPY") for src in shlex.split(rest)[:-1]}

    def covered(path: str) -> bool:
        return any(path == c or path.startswith(c + "/") for c in copied)

    makefile = (ROOT / "Makefile").read_text()
    needed = {"Makefile", "pyproject.toml", "zerocopy/__init__.py", "scripts/setup-gpu.sh"}
    needed.add(re.search(r'^readme = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1])
    needed |= set(re.search(r"^\$\(STAMP\): (.*)$", makefile, re.M)[1].split())  # what `make setup` depends on
    for script in ("scripts/setup-gpu.sh", "Makefile"):  # and every script those two name
        needed |= set(re.findall(r"scripts/[\w.-]+", (ROOT / script).read_text()))
    missing = sorted(p for p in needed if not covered(p))
    assert not missing, f"make setup-gpu reads {missing}, which the Dockerfile does not copy"


def test_it_runs_make_setup_gpu_and_duplicates_none_of_its_recipe():
    run = the_setup_gpu_run()
    # setup-gpu decides with apt-cache which FFmpeg to use and which optional libraries FFmpeg gets: the lists first
    assert run.index("apt-get update") < run.index("make setup-gpu")
    assert "scripts/setup-gpu.sh" in re.search(r"^setup-gpu:\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)[1]
    text = DOCKERFILE.read_text()
    ffmpeg = (ROOT / "scripts" / "ffmpeg-build.sh").read_text()
    version = re.search(r"^FFMPEG_VERSION=(\S+)$", ffmpeg, re.M)[1]
    sha = re.search(r"^FFMPEG_SHA256=(\S+)$", ffmpeg, re.M)[1]
    pyav_sha = re.search(r"sha256:([0-9a-f]{64})", (ROOT / "scripts" / "pyav-source.txt").read_text())[1]
    for copied_recipe in (version, sha, pyav_sha, "--enable-vaapi", "./configure", "pip install av",
                          "pyav-source.txt", "zerocopy.bridge build"):
        assert copied_recipe not in text, f"{copied_recipe!r}: that is make setup-gpu's to do, not the Dockerfile's"
    venv = re.search(r"make setup-gpu VENV=(\S+)", run)[1]
    assert json.loads(all_of("ENTRYPOINT")[0]) == [f"{venv}/bin/zerocopy"]
    assert env()["PATH"].split(":")[0] == f"{venv}/bin"


def test_the_ffmpeg_prefix_stays_in_the_image_at_the_path_of_its_rpath():
    """Where make setup-gpu builds FFmpeg (bookworm), PyAV and the bridge are linked with the prefix's rpath: it
    must be a fixed path outside root's home, read by ffmpeg-build.sh under that name, and never cleaned up."""
    variables = env()
    cache = variables["ZEROCOPY_FFMPEG_CACHE"]
    assert cache.startswith("/opt/zerocopy/")
    assert "${ZEROCOPY_FFMPEG_CACHE:-" in (ROOT / "scripts" / "ffmpeg-build.sh").read_text()
    models = variables["ZEROCOPY_CACHE"]
    from zerocopy.catalog.fetch import CACHE_ENV

    assert CACHE_ENV == "ZEROCOPY_CACHE"
    keep = (cache, models, "/opt/zerocopy")
    for run in all_of("RUN"):
        for m in re.finditer(r"rm -rf ([^&]*)", run):
            for target in m[1].split():
                target = target.strip('"').replace("$ZEROCOPY_FFMPEG_CACHE", cache)
                assert target not in keep and not any(k.startswith(target.rstrip("/*") + "/") for k in keep), target
                assert not target.startswith(f"{cache}/ffmpeg-"), f"{target}: the prefix PyAV's rpath points at"


def test_its_distribution_is_one_a_ci_target_tests():
    """The default is the VA stack root's suite (make test-va-stack); the other one offered is the host test's
    system (make test-gpu-host). docs/hardware.md's table says for each that it is run on every CI run."""
    assert re.fullmatch(r"debian:\$\{DEBIAN\}-slim", all_of("FROM")[0])
    va_stack = (ROOT / "scripts" / "va-stack.sh").read_text()
    assert arg_default("DEBIAN") == re.search(r"^SUITE=(\S+)$", va_stack, re.M)[1]
    offered = set(re.findall(r"^# DEBIAN=(\w+)", comments(), re.M))
    assert arg_default("DEBIAN") in offered and len(offered) >= 2
    table = section(HARDWARE.read_text(), "A PyAV with VA-API")
    for name in offered:
        row = next((line for line in table.splitlines() if line.startswith("|") and f'"{name}"' in line), None)
        assert row is not None, f"docs/hardware.md's distribution table has no row for {name}"
        assert row.rstrip(" |").split("|")[-1].strip().startswith("**yes**: every CI run"), row


def test_it_installs_what_doctor_advises_and_the_docs_name():
    from zerocopy import doctor

    installed = apt_installed()
    advised = set(re.findall(r"apt-get install (\S+)", doctor.OPENCL + doctor.VA_DRIVER))
    assert advised and advised <= installed, f"doctor advises {advised - installed}, which the image lacks"
    assert "non-free" in all_of("RUN")[0] and "intel-media-va-driver-non-free" in installed  # it is in non-free
    drivers = section(HARDWARE.read_text(), "Hardware and drivers")
    named = {"intel-media-va-driver-non-free": "`intel-media-va-driver` or `-non-free`",
             "intel-opencl-icd": "`intel-opencl-icd`", "vainfo": "`vainfo`"}
    for name, words in named.items():
        assert name in installed and words in drivers, name
    va_stack = set(bash_array("va-stack.sh", "PACKAGES"))
    assert {"python3-venv", "make"} <= installed & va_stack  # what the root has to run make setup-gpu with


def test_the_va_stack_roots_packages_are_all_accounted_for():
    """Every package of the VA stack root is in the image: installed by the Dockerfile, by make setup-gpu (the -dev
    packages) or by make setup (scripts/install-system-deps.sh); the one exception is named above, and said why."""
    root = set(bash_array("va-stack.sh", "PACKAGES"))
    by_setup_gpu = set(bash_array("setup-gpu.sh", "SYSTEM_DEBS"))
    by_make_setup = set(bash_array("install-system-deps.sh", "pkgs"))
    assert root >= NOT_IN_THE_IMAGE, "the exception is no longer in the VA stack root: drop it"
    missing = root - apt_installed() - by_setup_gpu - by_make_setup - NOT_IN_THE_IMAGE
    assert not missing, f"the VA stack root has {sorted(missing)}, which the image would lack"


def test_serve_runs_as_a_user_of_its_own_with_the_models_in_the_image():
    ops = [op for op, _ in instructions()]
    user = all_of("USER")
    assert len(user) == 1 and user[0] not in ("root", "0") and ops.index("USER") > max(
        i for i, op in enumerate(ops) if op == "RUN"), "every RUN as root, then serve as its user"
    assert any(re.search(rf"useradd .*\b{user[0]}$", run) for run in all_of("RUN"))
    pull = next(run for run in all_of("RUN") if "zerocopy models pull" in run)
    assert "make models" in comments() and "models pull" in (ROOT / "Makefile").read_text()
    # serve writes OpenVINO's compile cache there (its only write into the cache): the user's own folder
    assert 'cache_dir() / "ov-cache"' in (ROOT / "zerocopy" / "serve" / "engine.py").read_text()
    assert re.search(rf"install -d -o {user[0]} -g {user[0]} \"\$ZEROCOPY_CACHE/ov-cache\"", pull)
    assert json.loads(all_of("CMD")[0]) == ["serve", "/config/cameras.toml"]
    assert all_of("STOPSIGNAL") == ["SIGTERM"]


def healthcheck_code() -> str:
    rest = all_of("HEALTHCHECK")[0]
    argv = json.loads(rest[rest.index("CMD ") + 4:])
    assert argv[:2] == ["/usr/bin/python3", "-c"] and "python3" in apt_installed()
    return argv[2]


class Opened(Exception):
    pass


def run_healthcheck(monkeypatch, **variables: str):
    """The HEALTHCHECK's code, run here with the environment given, its request caught instead of sent."""
    import urllib.request

    for name in ("ZEROCOPY_HTTP_TOKEN", "ZEROCOPY_HTTP_TOKEN_FILE", "ZEROCOPY_HEALTH_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    sent = []

    class Opener:
        def open(self, request, timeout):
            sent.append(request)
            raise Opened

    monkeypatch.setattr(urllib.request, "build_opener", lambda *handlers: Opener())
    with pytest.raises(Opened):
        exec(compile(healthcheck_code(), "HEALTHCHECK", "exec"), {})
    return sent[0]


def test_the_health_check_gets_through_serves_gate_with_the_docs_container_config(monkeypatch, tmp_path):
    from zerocopy.serve.config import load_config
    from zerocopy.serve.gate import Gate
    from zerocopy.serve.http import StatusServer
    from zerocopy.serve.http_config import DEFAULT_LISTEN, parse_listen
    from zerocopy.serve.routes import Health, route

    doc = section(HARDWARE.read_text(), "A container for serve")
    (tmp_path / "cameras.toml").write_text(re.search(r"```toml\n(.*?)```", doc, re.S)[1])
    token = "0123456789abcdef0123456789abcdef"
    config = load_config(tmp_path / "cameras.toml", env={"ZEROCOPY_HTTP_TOKEN": token, "FRONT_PASSWORD": "pw"})
    host, port = parse_listen(config.http.listen)
    assert host == "0.0.0.0" and config.http.token == token  # the container's interface, so a token
    assert all_of("EXPOSE") == [str(port)] and port == parse_listen(DEFAULT_LISTEN).port
    gate = Gate(StatusServer(config.http.listen, None, config.http).hosts(), config.http.token)

    class Healthy:
        def healthy(self):
            return Health(True, "1 camera(s) running")

        def publisher_stats(self):
            return None

    def answer(request) -> int:
        url = urlsplit(request.full_url)
        assert (url.hostname, url.port) == ("127.0.0.1", port)
        headers = [(k.lower().encode(), v.encode()) for k, v in request.header_items()]
        headers.append((b"host", url.netloc.encode()))  # what urllib sends as Host
        refused = gate.refuse({"headers": headers, "server": (url.hostname, port)})
        return (refused or route(Healthy(), None, url.path)).status

    assert answer(run_healthcheck(monkeypatch, ZEROCOPY_HTTP_TOKEN=token)) == 200
    secret = tmp_path / "zerocopy-http"
    secret.write_text(token + "\n")  # as secrets files are written; serve's ${file:…} drops the newline too
    assert answer(run_healthcheck(monkeypatch, ZEROCOPY_HTTP_TOKEN_FILE=str(secret))) == 200
    assert answer(run_healthcheck(monkeypatch)) == 401  # without the token: unhealthy, as the docs say
    other = run_healthcheck(monkeypatch, ZEROCOPY_HEALTH_URL="http://127.0.0.1:9000/health")
    assert other.full_url == "http://127.0.0.1:9000/health"


def test_the_docs_say_it_is_not_built_here_and_what_each_step_mirrors():
    doc = section(HARDWARE.read_text(), "A container for serve")
    assert "scripts/container/Dockerfile" in doc and "cgroups" in doc
    assert "**It is not built here.**" in doc and "tests/unit/test_container_recipe.py" in doc
    table = [line for line in doc.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| step of the Dockerfile | mirrors | tested here by |")
    targets = set(re.search(r"^\.PHONY: (.*)$", (ROOT / "Makefile").read_text(), re.M)[1].split())
    mirrors = " ".join(row.split("|")[2] + row.split("|")[3] for row in table[1:])
    for script in ("scripts/va-stack.sh", "scripts/setup-gpu.sh", "scripts/ffmpeg-build.sh",
                   "scripts/install-system-deps.sh", "make test-va-stack", "make test-gpu-host"):
        assert script in mirrors, f"docs/hardware.md's table does not name {script}"
    for text in (mirrors, comments()):
        for path in re.findall(r"(?:scripts|tests|docs)/[\w./-]*\w", text):
            assert (ROOT / path).exists(), path
        for target in re.findall(r"`?make ([a-z][\w-]*)", text):
            assert target in targets, f"make {target} is not a target of the Makefile"
    serve = section((ROOT / "docs" / "serve.md").read_text(), "Container")
    assert "scripts/container/Dockerfile" in serve and "```dockerfile" not in serve  # one recipe, not two
