#!/usr/bin/env bash
# The VA stack, verified without a GPU: a Debian testing ("forky") root with FFmpeg >= 8 built with
# VA-API, where the project's own `make setup-gpu` builds PyAV and the native bridge, then doctor,
# the bridge self-test and the whole test suite run. /dev/dri/renderD128 exists in the root but has
# no driver behind it (the real "device cannot be opened" case).
#
#   scripts/va-stack.sh build            make the root, or reuse the cached one
#   scripts/va-stack.sh run -- CMD...    run CMD in the root: cwd /src (this checkout, read-write),
#                                        the root's venv /opt/zc-venv first on PATH
#   scripts/va-stack.sh test             build, make setup-gpu inside, doctor, self-test, pytest (the VA stack's
#                                        tests and ROOT_TESTS; ZEROCOPY_VA_SUITE=all: the whole suite)
#   scripts/va-stack.sh check            exit 0 if this machine can run `test`, else print why not
#   scripts/va-stack.sh clean            remove the cached root
#
# Needs root (debootstrap, mount namespaces, chroot). The root is cached outside the checkout, in
# $ZEROCOPY_VA_ROOT (default /var/cache/zerocopy/va-stack); it is rebuilt when RECIPE changes. Every
# command runs in a private mount namespace (unshare --mount), so no mount outlives it. The Debian
# mirror is the one apt already uses (or $ZEROCOPY_DEBIAN_MIRROR).
set -euo pipefail

SELF=$(readlink -f "$0")
REPO=$(cd "$(dirname "$SELF")/.." && pwd)
VAROOT=${ZEROCOPY_VA_ROOT:-/var/cache/zerocopy/va-stack}
SUITE=forky
# mosquitto: the tests' real MQTT broker. Installed here with the rest, because inside the root
# scripts/install-system-deps.sh's own `apt-get update` would stop on the snapshot's expired Release file.
PACKAGES=(python3-dev python3-venv build-essential pkg-config make ffmpeg libavcodec-dev libavformat-dev
          libavdevice-dev libavfilter-dev libavutil-dev libswscale-dev libswresample-dev libva-dev
          mosquitto mosquitto-clients)
# Bump when the recipe below changes: a cached root with another recipe is rebuilt.
RECIPE="zerocopy-va-stack 1; debootstrap --variant=minbase $SUITE (sid script); ${PACKAGES[*]}"
STAMP=.zerocopy-va-stack
VENV_IN=/opt/zc-venv
SRC_IN=/src
CA_IN=/etc/zerocopy-host-ca.crt
PYCACHE_IN=/var/cache/zc-pycache  # keeps the root's bytecode out of the bind-mounted checkout

die() { echo "va-stack: FAILED: $*" >&2; exit 1; }
note() { echo "va-stack: $*"; }
header() { printf '\n===== %s =====\n' "$*"; }
took() { local s=$((SECONDS - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# Why this machine cannot build or enter a root (empty when it can).
cannot_enter() {
  [ "$(uname -s)" = Linux ] || { echo "not Linux"; return; }
  [ "$(id -u)" = 0 ] || { echo "needs root (debootstrap, mount namespaces, chroot)"; return; }
  if ! command -v unshare >/dev/null || ! command -v chroot >/dev/null; then echo "unshare/chroot missing"; return; fi
  unshare --mount true 2>/dev/null || { echo "cannot create a mount namespace (unshare --mount)"; return; }
}

stamp_ok() { [ -f "$VAROOT/$STAMP" ] && [ "$(head -n1 "$VAROOT/$STAMP")" = "$RECIPE" ]; }

# The Debian mirror apt uses here (the first "Debian" archive of the host's sources).
mirror() {
  if [ -n "${ZEROCOPY_DEBIAN_MIRROR:-}" ]; then echo "$ZEROCOPY_DEBIAN_MIRROR"; return; fi
  local m
  # shellcheck disable=SC2016  # apt's own $(FIELD) syntax
  m=$(apt-get indextargets --format '$(REPO_URI)|$(LABEL)|$(TARGET_OF)' 2>/dev/null \
      | awk -F'|' '$2 == "Debian" && $3 == "deb" {print $1; exit}')
  # shellcheck disable=SC2016
  [ -n "$m" ] || m=$(apt-get indextargets --no-release-info --format '$(REPO_URI)|$(TARGET_OF)' 2>/dev/null \
      | awk -F'|' '$2 == "deb" && $1 ~ /\/debian\/?$/ {print $1; exit}')
  [ -n "$m" ] || return 1
  echo "${m%/}"
}

# Can the mirror be reached? (apt's own downloader, so apt's proxy settings apply; 20 s at most.)
mirror_reachable() {
  local m out
  m=$(mirror) || { echo "no Debian mirror in apt's sources (set ZEROCOPY_DEBIAN_MIRROR)"; return 1; }
  out=$(mktemp)
  if timeout 20 /usr/lib/apt/apt-helper -o Acquire::http::Timeout=10 -o Acquire::https::Timeout=10 \
       -o Acquire::Retries=0 download-file "$m/dists/$SUITE/Release" "$out" >/dev/null 2>&1 && [ -s "$out" ]; then
    rm -f "$out"; return 0
  fi
  rm -f "$out"
  echo "the Debian mirror $m is not reachable (dists/$SUITE/Release)"
  return 1
}

mounted_under() { awk -v p="$1" '$5 == p || index($5, p "/") == 1 {print $5}' /proc/self/mountinfo; }

remove_tree() {  # refuses to delete anything that has a mount in it
  [ -e "$1" ] || return 0
  [ -z "$(mounted_under "$1")" ] || die "something is mounted under $1: $(mounted_under "$1" | head -n1)"
  rm -rf --one-file-system "$1"
}

# ---- entering the root: a private mount namespace, then chroot ----------------------------------
# enter ROOT CWD CMD...: bind-mounts this checkout at /src when CWD is /src.
enter() {
  local root=$1; shift
  local envs=(
    "PATH=$VENV_IN/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    HOME=/root LANG=C.UTF-8 "TERM=${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive
    "VENV=$VENV_IN" "PYTHONPYCACHEPREFIX=$PYCACHE_IN"
    "PIP_CERT=$CA_IN" "SSL_CERT_FILE=$CA_IN" "REQUESTS_CA_BUNDLE=$CA_IN"
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore "PIP_DEFAULT_TIMEOUT=${PIP_DEFAULT_TIMEOUT:-60}"
    # the root has no browser (install-system-deps.sh leaves it out): the page's tests run on the host (make test)
    ZEROCOPY_IN_VA_ROOT=1 ZEROCOPY_NO_BROWSER=1
  )
  local v
  for v in $(compgen -e); do  # what CI and the user set for the project passes through
    case $v in
      CI|PYTEST_ADDOPTS|http_proxy|https_proxy|no_proxy|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|PIP_INDEX_URL) envs+=("$v=${!v}") ;;
      ZEROCOPY_VA_ROOT|ZEROCOPY_DEBIAN_MIRROR|ZEROCOPY_CACHE|ZEROCOPY_FFMPEG_PREFIX|ZEROCOPY_PYTHON|ZEROCOPY_WHEEL_CACHE) ;;  # host paths
      ZEROCOPY_FFMPEG_CACHE|ZEROCOPY_FFMPEG_URL|ZEROCOPY_TEST_DEAD_NODE) ;;  # host paths too (make test-gpu-host)
      ZEROCOPY_*) envs+=("$v=${!v}") ;;
    esac
  done
  unshare --mount --propagation private -- bash "$SELF" __enter "$root" "$REPO" "${#envs[@]}" "${envs[@]}" "$@"
}

# Runs inside the new mount namespace (as `__enter`): mounts, then chroot.
inner_enter() {
  local root=$1 repo=$2 n=$3; shift 3
  local envs=("${@:1:$n}"); shift "$n"
  local cwd=$1; shift
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys" 2>/dev/null || mount --rbind /sys "$root/sys"
  mount -t tmpfs -o mode=755,nosuid tmpfs "$root/dev"
  local d
  for d in null zero full random urandom tty; do
    touch "$root/dev/$d"; mount --bind "/dev/$d" "$root/dev/$d"
  done
  mkdir -p "$root/dev/pts" "$root/dev/shm" "$root/dev/dri"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts"
  ln -s pts/ptmx "$root/dev/ptmx"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
  ln -s /proc/self/fd "$root/dev/fd"
  ln -s /proc/self/fd/0 "$root/dev/stdin"; ln -s /proc/self/fd/1 "$root/dev/stdout"; ln -s /proc/self/fd/2 "$root/dev/stderr"
  # A DRM render node with no driver behind it: opening it fails, as on a machine without a GPU driver.
  mknod -m 666 "$root/dev/dri/renderD128" c 226 128
  mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  local ca
  for ca in "${PIP_CERT:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
    [ -n "$ca" ] && [ -f "$ca" ] && break
  done
  cp -L "$ca" "$root$CA_IN"  # pip in the root trusts what the host trusts
  if [ "$cwd" = "$SRC_IN" ]; then
    mkdir -p "$root$SRC_IN"
    mount --bind "$repo" "$root$SRC_IN"
  fi
  # shellcheck disable=SC2016  # $0/$@ belong to the inner shell
  exec chroot "$root" /usr/bin/env -i "${envs[@]}" /bin/sh -c 'cd "$0" && exec "$@"' "$cwd" "$@"
}

# ---- build --------------------------------------------------------------------------------------
build() {
  local why; why=$(cannot_enter)
  [ -z "$why" ] || die "$why"
  mkdir -p "$(dirname "$VAROOT")"
  exec 8>"$VAROOT.lock"
  flock 8
  if stamp_ok; then
    note "reusing the cached root $VAROOT ($(sed -n 2p "$VAROOT/$STAMP"))"
    return 0
  fi
  local m; m=$(mirror) || die "no Debian mirror in apt's sources (set ZEROCOPY_DEBIAN_MIRROR)"
  local script=/usr/share/debootstrap/scripts/sid
  if ! command -v debootstrap >/dev/null || [ ! -f "$script" ]; then
    note "installing debootstrap (apt-get)"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null \
      || die "apt-get install debootstrap failed"
  fi
  local new="$VAROOT.new" log="$VAROOT.build.log" t0=$SECONDS t
  remove_tree "$new"
  : >"$log"
  t=$SECONDS
  note "[1/2] debootstrap --variant=minbase $SUITE from $m (about 30 s; log: $log)"
  debootstrap --variant=minbase "$SUITE" "$new" "$m" "$script" >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; die "debootstrap $SUITE failed (log: $log)"; }
  note "      done in $(took "$t")"
  t=$SECONDS
  note "[2/2] apt-get install ${PACKAGES[*]} (about 1 min)"
  # shellcheck disable=SC2016
  enter "$new" / /bin/sh -c '
    set -e
    apt-get -o Acquire::Check-Valid-Until=false -q update
    apt-get install -y -q --no-install-recommends "$@"
    apt-get clean
    rm -rf /var/lib/apt/lists/*' sh "${PACKAGES[@]}" >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; die "apt-get install in the new root failed (log: $log)"; }
  note "      done in $(took "$t")"
  local versions
  # shellcheck disable=SC2016
  versions=$(enter "$new" / /bin/sh -c 'printf "Python %s, FFmpeg %s, libva %s" \
    "$(python3 -c "import platform; print(platform.python_version())")" \
    "$(dpkg-query -W -f="\${Version}" ffmpeg | sed "s/^[0-9]*://")" "$(dpkg-query -W -f="\${Version}" libva-dev)"')
  printf '%s\nbuilt %s from %s: %s\n' "$RECIPE" "$(date -u +%Y-%m-%dT%H:%MZ)" "$m" "$versions" >"$new/$STAMP"
  remove_tree "$VAROOT"
  mv "$new" "$VAROOT"
  note "root ready in $(took "$t0"): $VAROOT ($versions)"
}

run() {
  local why; why=$(cannot_enter)
  [ -z "$why" ] || die "$why"
  stamp_ok || die "no root at $VAROOT (or an old recipe): run scripts/va-stack.sh build"
  [ $# -gt 0 ] || set -- bash
  enter "$VAROOT" "$SRC_IN" "$@"
}

check() {
  local why; why=$(cannot_enter)
  [ -z "$why" ] || { echo "$why"; return 1; }
  stamp_ok && return 0
  command -v apt-get >/dev/null || { echo "no cached root and no apt-get to build one"; return 1; }
  mirror_reachable
}

# ---- test ---------------------------------------------------------------------------------------
# What the root runs besides the VA stack's own tests (vastack, native): the tests of what a VA-API PyAV built
# against FFmpeg 9 changes under everything else (decoding, the scalers, the hand-off, the paths and their fallback,
# damaged inputs, the request queues' lifetimes under Python 3.14). `make test` runs the whole suite on the host;
# ZEROCOPY_VA_SUITE=all runs the whole suite here too (7 min 47 s to 7 min 57 s in all, measured here).
ROOT_TESTS=(tests/unit/bridge tests/unit/decode tests/unit/resize tests/unit/handoff tests/unit/paths tests/unit/infer
            tests/unit/test_paths.py tests/unit/test_pipeline.py tests/unit/test_lifetimes.py tests/e2e/test_detect.py
            tests/e2e/test_fallback.py tests/e2e/test_path_selection.py tests/e2e/test_damaged_inputs.py
            tests/e2e/test_stress_lifetimes.py)
DOCTOR_CHECKS=$(cat <<'EOF'
import json, re, sys
info = json.load(open(sys.argv[1]))
fails = []
def need(ok, what):
    if not ok:
        fails.append(what)
p = info["pyav"]
need(int(p["version"].split(".")[0]) >= 17, f"PyAV {p['version']} is older than 17")
need("vaapi" in p["hwdevices"], f"PyAV offers no vaapi device type ({p['hwdevices']})")
for f in ("scale_vaapi", "pad_vaapi", "hwdownload"):
    need(p["va_filters"].get(f), f"PyAV's FFmpeg has no {f} filter")
b = info["native_bridge"]
need(b["status"] == "ok", f"native bridge: {b['status']}")
need(b.get("headers", {}).get("libavutil") == p["ffmpeg"]["libavutil"],
     f"bridge headers {b.get('headers')} are not PyAV's libavutil {p['ffmpeg']['libavutil']}")
need(b.get("selftest") and all(c["ok"] for c in b["selftest"]),
     f"bridge self-test: {[c['name'] for c in b.get('selftest', []) if not c['ok']] or 'missing'}")
nodes = {n["path"]: n for n in info["render_nodes"]}
need("/dev/dri/renderD128" in nodes, f"doctor does not list /dev/dri/renderD128 ({list(nodes)})")
node = nodes.get("/dev/dri/renderD128")
if node:
    need(not node["va_display"]["ok"], "a VA display initialised on a node with no driver")
    # FFmpeg's vaapi device creation fails with EINVAL ("No VA display found for device ...")
    need(re.search(r"No VA display found|Invalid argument", node["va_display"]["detail"]),
         f"the dead node fails for another reason: {node['va_display']['detail']}")
need(info["openvino"]["gpu"] is None, "OpenVINO sees a GPU here?")
# The only reasons a VA path may be refused here: no GPU, or the render node that cannot be opened.
allowed = re.compile(r"OpenVINO sees no GPU|render node|renderD128|VA display|/dev/dri", re.I)
paths = info["paths"]  # schema 2: {"available": bool, "reasons": [...]} per path
need(not paths["zero-copy"]["available"], f"zero-copy: {paths['zero-copy']} (there is no GPU)")
for name in ("zero-copy", "copy"):
    for why in paths[name]["reasons"]:
        need(allowed.search(why), f"{name} refused for a reason the VA stack should have removed: {why}")
need(paths["software"]["available"], f"software: {paths['software']}")
need(paths["baseline"]["available"], f"baseline: {paths['baseline']}")
for f in fails:
    print(f"  FAIL {f}")
if not fails:
    print(f"  ok: PyAV {p['version']} (libavcodec {p['ffmpeg']['libavcodec']}) offers vaapi, scale_vaapi, pad_vaapi; "
          f"bridge ok; zero-copy: {paths['zero-copy']}; copy: {paths['copy']}")
sys.exit(1 if fails else 0)
EOF
)

test_stack() {
  local t0=$SECONDS t failed=() out
  header "VA stack: the $SUITE root"
  build
  header "make setup-gpu inside the root (VENV=$VENV_IN)"
  t=$SECONDS
  run make --no-print-directory setup-gpu VENV="$VENV_IN" PYTHON=python3 \
    || die "make setup-gpu failed inside the root (after $(took "$t"))"
  note "setup-gpu took $(took "$t")"

  header "zerocopy doctor --json"
  out=$(mktemp)
  if run zerocopy doctor --json >"$out"; then
    cat "$out"
    echo
    python3 -c "$DOCTOR_CHECKS" "$out" || failed+=("doctor")
  else
    cat "$out"; failed+=("doctor (did not run)")
  fi
  rm -f "$out"

  header "native bridge self-test (a process without PyAV)"
  local folder
  if folder=$(run python -m zerocopy.bridge build --system) && run python -m zerocopy.bridge selftest "$folder"; then
    echo
  else
    echo; failed+=("bridge self-test")
  fi

  # -v and faulthandler (pytest's own, on by default; the children get PYTHONFAULTHANDLER): a crash names its test
  local summary="" part parts=(stack paths)
  [ "${ZEROCOPY_VA_SUITE:-root}" = all ] && parts=(stack rest serial)
  for part in "${parts[@]}"; do
    local workers=(-n 2 --dist loadfile)
    case $part in
      stack) header "pytest: the VA stack's own tests (-m 'vastack or native'), inside the root"
             set -- -m "vastack or native" tests ;;
      paths) header "pytest: what this root changes under the rest (decoding, scaling, hand-off, paths, lifetimes)"
             set -- -m "not vastack and not native and not serial" "${ROOT_TESTS[@]}" ;;
      rest) header "pytest: the rest of the suite (ZEROCOPY_VA_SUITE=all), inside the root"
            set -- -m "not vastack and not native and not serial" tests ;;
      serial) header "pytest: the tests marked serial, alone, inside the root"
              set -- -m "serial and not vastack and not native" tests; workers=() ;;
    esac
    t=$SECONDS
    local log rc=0
    log=$(mktemp)
    run env PYTHONFAULTHANDLER=1 python -m pytest -v -rfEs -p no:cacheprovider "${workers[@]}" "$@" 2>&1 \
      | tee "$log" | { grep -vE ' PASSED | SKIPPED |^tests/[^ ]+ $' || true; } || rc=$?
    summary=$(grep -E '^=* *[0-9]+ (passed|failed|error)|(passed|failed|error).* in [0-9.]+s' "$log" | tail -n1 \
              | tr -d '=' | sed 's/^ *//; s/ *$//')
    rm -f "$log"
    [ "$rc" = 0 ] || failed+=("pytest $part (${summary:-exit $rc})")
    note "pytest ($part) took $(took "$t"): ${summary:-exit $rc}"
  done

  local stack
  stack=$(run python -c 'import av, platform; v = av.library_versions["libavcodec"]; print(f"PyAV {av.__version__}, libavcodec {v[0]}.{v[1]}, Python {platform.python_version()}")' \
          2>/dev/null || echo "?")
  header "verdict"
  if [ ${#failed[@]} -eq 0 ]; then
    echo "VA stack: PASS ($stack; doctor, bridge self-test, pytest ${summary:-ok}) in $(took "$t0")"
  else
    local IFS=';'
    echo "VA stack: FAIL: ${failed[*]} ($stack) in $(took "$t0")"
    return 1
  fi
}

case "${1:-}" in
  build) build ;;
  run) shift; [ "${1:-}" = -- ] && shift; run "$@" ;;
  test) test_stack ;;
  check) check ;;
  clean)
    exec 8>"$VAROOT.lock"; flock 8
    remove_tree "$VAROOT.new"; remove_tree "$VAROOT"; note "removed $VAROOT" ;;
  __enter) shift; inner_enter "$@" ;;
  *) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
