#!/usr/bin/env bash
# Set up the project's venv for the VA-API paths (zero-copy, copy) on Linux:
#   0. which FFmpeg: the system's where it is >= 8 (Debian testing), else FFmpeg 9 built for zerocopy by
#      scripts/ffmpeg-build.sh (Debian 12 and 13, Ubuntu 22.04 and 24.04 ship 5.1 to 7.1);
#      ZEROCOPY_FFMPEG=auto|system|build chooses (default auto),
#   1. the development packages that needs, named: apt-get as root, otherwise the command is printed.
#      They are the only thing installed system-wide. Only this step runs as root: under sudo, the rest
#      runs as the user who ran sudo ($SUDO_USER), so the venv and the caches are theirs (as root with no
#      SUDO_USER, e.g. a container, all of it runs as root),
#   2. the system FFmpeg checked (>= 8, built with VA-API); or FFmpeg 9 built once into a prefix of its
#      own in the user's cache (about 5 minutes on 2 cores; a rerun reuses it),
#   3. `make setup` (the venv, as usual, with PyPI's PyAV, which has no VA-API),
#   4. PyAV rebuilt from source against that FFmpeg, replacing PyPI's wheel: the source is
#      scripts/pyav-source.txt's sdist and the build tools scripts/pyav-build-tools.txt's, all checked
#      by sha256 (pip --require-hashes; the tools in a throwaway venv, the build with
#      --no-build-isolation). Against FFmpeg built here it is linked with that prefix's rpath, so it
#      loads that FFmpeg without LD_LIBRARY_PATH. The built wheel is cached per PyAV, Python, FFmpeg and
#      pins, with its sha256 recorded beside it and checked before it is reinstalled (a rerun takes seconds),
#   5. the native bridge built against the same headers ("built and verified", or this fails),
#   6. `zerocopy doctor`, and its verdict.
#
#   make setup-gpu                      # or: scripts/setup-gpu.sh
#
# Environment: VENV (default .venv), PYTHON (default python3), ZEROCOPY_FFMPEG (auto|system|build),
# ZEROCOPY_FFMPEG_CACHE and ZEROCOPY_FFMPEG_URL (see scripts/ffmpeg-build.sh), ZEROCOPY_AV_VERSION (default
# and only accepted value: the version pinned in scripts/pyav-source.txt), ZEROCOPY_WHEEL_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/zerocopy/wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
MAKE=${MAKE:-make}
PY="$VENV/bin/python"
AV_PINS=scripts/pyav-source.txt TOOL_PINS=scripts/pyav-build-tools.txt
FFMPEG_BUILD=scripts/ffmpeg-build.sh
SYSTEM_DEBS=(pkg-config build-essential python3-dev libavcodec-dev libavformat-dev libavdevice-dev libavfilter-dev
             libavutil-dev libswscale-dev libswresample-dev libva-dev)
LIBS=(libavcodec libavformat libavdevice libavfilter libavutil libswscale libswresample)
MIN_FFMPEG=8 MIN_AVCODEC=62 MIN_AVUTIL=60  # FFmpeg 8.x ships libavcodec 62, libavutil 60

first() { for f in "$@"; do [ -e "$f" ] && { echo "$f"; return 0; }; done; return 0; }  # first existing of a glob
die() { echo "setup-gpu: FAILED: $*" >&2; exit 1; }
step() { echo "==> $*"; }
tmp=""  # the PyAV build folder while it exists: removed on any exit, Ctrl-C and kill included
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_all=$SECONDS

# FFmpeg release of a libavcodec major version: 5.x = 59, 6.x = 60, 7.x = 61, 8.x = 62, 9.x = 63.
ffmpeg_of_avcodec() { if [ "$1" -ge 59 ]; then echo "$(($1 - 54)).x"; else echo "older than 5"; fi; }

what_to_do() {  # printed when ZEROCOPY_FFMPEG=system was asked for and the system FFmpeg cannot carry PyAV >= 17
  cat >&2 <<EOF
setup-gpu: the VA-API paths need PyAV >= 17 (HWAccel is_hw_owned), and PyAV >= 17 builds only against FFmpeg >= 8
built with VA-API. ZEROCOPY_FFMPEG=system asked for the system's FFmpeg; without it, make setup-gpu builds the
FFmpeg zerocopy needs into your cache (scripts/ffmpeg-build.sh) and PyAV against that.
The software path works everywhere: make setup.
EOF
}

[ "$(uname -s)" = Linux ] || die "VA-API is Linux-only (this is $(uname -s)); use make setup for the software path"

# --- 0. which FFmpeg -----------------------------------------------------------------------------
decision=$(bash "$FFMPEG_BUILD" decide) || die "$decision"
choice=${decision%% *}
step "FFmpeg: ${decision#* }"
if [ "$choice" = build ]; then
  read -r -a DEBS <<<"$(bash "$FFMPEG_BUILD" packages | sed 's/ optional:/ /') python3-dev"
else
  DEBS=("${SYSTEM_DEBS[@]}")
fi

# --- 1. development packages ---------------------------------------------------------------------
missing=()
if command -v dpkg-query >/dev/null; then
  for p in "${DEBS[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$choice" = system ]; then  # before installing anything: would apt's FFmpeg be new enough at all?
      cand=$(apt-cache policy libavcodec-dev 2>/dev/null | awk '/Candidate:/ {print $2}')
      cand_major=$(sed -E 's/^[0-9]+://; s/[^0-9].*//' <<<"${cand:-}")
      if [ -n "$cand_major" ] && [ "$cand_major" -lt "$MIN_FFMPEG" ]; then
        what_to_do
        die "this system's FFmpeg is ${cand#*:} (apt's libavcodec-dev); the VA-API paths need FFmpeg >= $MIN_FFMPEG"
      fi
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      step "installing the development packages: ${missing[*]}"
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
      missing=()
    else
      echo "setup-gpu: missing development packages (the only thing it installs system-wide); run:" >&2
      echo "  sudo apt-get install --no-install-recommends ${missing[*]}" >&2
      echo "then make setup-gpu again (or run it as sudo make setup-gpu: only apt-get runs as root)" >&2
      exit 1
    fi
  fi
elif [ "$choice" = system ]; then
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  command -v cc >/dev/null || missing+=("a C compiler")
  "$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' \
    2>/dev/null || missing+=("Python headers")
  for l in "${LIBS[@]}" libva; do
    command -v pkg-config >/dev/null && pkg-config --exists "$l" || missing+=("$l")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup-gpu: missing: ${missing[*]}. Install the FFmpeg and libva development packages, e.g." >&2
    echo "  Debian/Ubuntu: sudo apt-get install --no-install-recommends ${SYSTEM_DEBS[*]}" >&2
    echo "  Fedora (FFmpeg from RPM Fusion): sudo dnf install gcc pkgconf-pkg-config python3-devel ffmpeg-devel libva-devel" >&2
    exit 1
  fi
fi  # building FFmpeg without dpkg: scripts/ffmpeg-build.sh names the pkg-config modules it lacks

# --- as root under sudo: the packages are in; the rest as the user who ran sudo ------------------
if [ "$(id -u)" = 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
  step "the rest runs as $SUDO_USER, not root (the venv, the builds and the caches are theirs)"
  keep=(VENV="$VENV" PYTHON="$PYTHON" MAKE="$MAKE")
  for v in ZEROCOPY_AV_VERSION ZEROCOPY_WHEEL_CACHE ZEROCOPY_FFMPEG ZEROCOPY_FFMPEG_CACHE ZEROCOPY_FFMPEG_URL \
           ZEROCOPY_DEBIAN_MIRROR ZEROCOPY_PROGRESS_EVERY PIP_INDEX_URL PIP_EXTRA_INDEX_URL http_proxy https_proxy \
           no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
    if [ -n "${!v:-}" ]; then keep+=("$v=${!v}"); fi
  done
  exec sudo -u "$SUDO_USER" -H env "${keep[@]}" bash "$PWD/scripts/setup-gpu.sh"
fi

# --- 2. the FFmpeg: the system's (>= 8, with VA-API), or built here ------------------------------
prefix=""
if [ "$choice" = build ]; then
  step "FFmpeg built for zerocopy (scripts/ffmpeg-build.sh; once, then cached)"
  prefix=$(bash "$FFMPEG_BUILD" build) || die "building FFmpeg failed (the lines above say why)"
  # PyAV's build (pkg-config) and the bridge find it through its .pc files; both are linked with its rpath.
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LDFLAGS="-Wl,-rpath,$prefix/lib${LDFLAGS:+ $LDFLAGS}"
fi
for l in "${LIBS[@]}" libva; do
  pkg-config --exists "$l" || die "pkg-config finds no $l (its -dev package is missing)"
done
avcodec=$(pkg-config --modversion libavcodec)
avutil=$(pkg-config --modversion libavutil)
libva=$(pkg-config --modversion libva)
ffmpeg_rel=$(ffmpeg_of_avcodec "${avcodec%%.*}")
where=${prefix:-the system}
if [ "${avcodec%%.*}" -lt "$MIN_AVCODEC" ] || [ "${avutil%%.*}" -lt "$MIN_AVUTIL" ]; then
  what_to_do
  die "the FFmpeg of $where is $ffmpeg_rel (libavcodec $avcodec, libavutil $avutil); the VA-API paths need FFmpeg >= $MIN_FFMPEG"
fi
incdir=$(pkg-config --variable=includedir libavutil)
libdir=$(pkg-config --variable=libdir libavutil)
so=$(first "$libdir"/libavutil.so.*)
[ -f "$incdir/libavutil/hwcontext_vaapi.h" ] || die "no $incdir/libavutil/hwcontext_vaapi.h (libavutil-dev incomplete?)"
if [ -z "$so" ] || [[ "$(ldd "$so" 2>/dev/null)" != *libva.so* ]]; then
  [ "$choice" = system ] && [ "${ZEROCOPY_FFMPEG:-auto}" = auto ] \
    && die "the system FFmpeg $ffmpeg_rel is built without VA-API (${so:-no libavutil.so in $libdir} does not link libva); ZEROCOPY_FFMPEG=build make setup-gpu builds one with it"
  die "the FFmpeg of $where ($ffmpeg_rel) is built without VA-API (${so:-no libavutil.so in $libdir} does not link libva)"
fi
echo "FFmpeg $ffmpeg_rel of $where (libavcodec $avcodec, libavutil $avutil) with VA-API (libva, VA-API $libva)"

# --- 3. the venv ---------------------------------------------------------------------------------
if [ -e "$VENV" ] && [ ! -w "$VENV" ]; then
  die "$VENV is not writable by $(id -un) (left by an earlier run as root?); run: sudo chown -R $(id -un): $VENV"
fi
if ! "$MAKE" --no-print-directory -q setup VENV="$VENV" PYTHON="$PYTHON" 2>/dev/null; then
  step "make setup (the venv with PyPI's PyAV, replaced below)"
  "$MAKE" --no-print-directory setup VENV="$VENV" PYTHON="$PYTHON"
fi

# --- 4. PyAV against that FFmpeg -----------------------------------------------------------------
pinned=$(sed -nE 's/^av==([^ ]+) .*--hash=sha256:[0-9a-f]{64}.*/\1/p' "$AV_PINS")
[ -n "$pinned" ] || die "$AV_PINS pins no av==VERSION --hash=sha256:..."
AV_VERSION=${ZEROCOPY_AV_VERSION:-$pinned}
[ "$AV_VERSION" = "$pinned" ] \
  || die "PyAV $AV_VERSION is not the pinned source ($AV_PINS pins $pinned by sha256); change the pin there to build another"
[ "${AV_VERSION%%.*}" -ge 17 ] 2>/dev/null \
  || die "the pinned PyAV $AV_VERSION is older than 17 (no HWAccel is_hw_owned); pin 18.1.0 or newer in $AV_PINS"

sysversions=$(for l in "${LIBS[@]}"; do printf '%s=%s\n' "$l" "$(pkg-config --modversion "$l")"; done)
pyav_ok() {  # the venv's PyAV is $AV_VERSION, links exactly that FFmpeg (from $libdir), and offers VA-API
  SYSV="$sysversions" WANT="$AV_VERSION" LIBDIR="$libdir" env -u LD_LIBRARY_PATH "$PY" - <<'EOF' 2>/dev/null
import os, sys
import av, av.codec.hwaccel, av.filter
want = dict(line.split("=") for line in os.environ["SYSV"].split())
have = {k: ".".join(map(str, v)) for k, v in av.library_versions.items()}
with open("/proc/self/maps") as f:
    mapped = {os.path.realpath(line.split()[-1]) for line in f if "/libavutil.so" in line}
ok = (av.__version__ == os.environ["WANT"] and all(have.get(k) == v for k, v in want.items())
      and "vaapi" in av.codec.hwaccel.hwdevices_available() and "scale_vaapi" in av.filter.filters_available
      and len(mapped) == 1 and os.path.dirname(mapped.pop()) == os.path.realpath(os.environ["LIBDIR"]))
sys.exit(0 if ok else 1)
EOF
}

if pyav_ok; then
  echo "PyAV $AV_VERSION is already built against the FFmpeg of $where"
else
  key=$("$PY" - <<EOF
import platform, sys, sysconfig
print(f"av-$AV_VERSION-{sys.implementation.cache_tag}-{sysconfig.get_platform()}")
EOF
)
  # The prefix is in the key: a wheel built against FFmpeg in a prefix carries that prefix's rpath.
  key="$key-$(printf '%s\nlibva=%s\nffmpeg=%s\n' "$sysversions" "$libva" "$where" | cat - "$AV_PINS" "$TOOL_PINS" \
              | sha256sum | cut -c1-12)"
  cache=${ZEROCOPY_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zerocopy/wheels}/$key
  wheel=$(first "$cache"/av-*.whl)
  # A cached wheel is reinstalled only if it still has the sha256 recorded when it was built.
  if [ -n "$wheel" ] && ! (cd "$cache" && sha256sum --quiet --check "$(basename "$wheel").sha256" 2>/dev/null); then
    echo "the cached $wheel does not match the sha256 recorded when it was built; building it again"
    rm -f "$wheel" "$wheel.sha256"
    wheel=""
  fi
  if [ -z "$wheel" ]; then
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.build.XXXXXX")
    log="$cache/build.log"
    step "building PyAV $AV_VERSION from source against FFmpeg $ffmpeg_rel (about 2.5 minutes on 2 cores; log: $log)"
    start=$SECONDS
    # The pinned build tools in a throwaway venv, then the pinned sdist built there with them alone
    # (--no-build-isolation); --require-hashes: pip refuses any file whose sha256 is not pinned.
    # --no-cache-dir: never reuse a wheel pip built for another FFmpeg.
    if ! { "$PY" -m venv "$tmp/env" \
           && "$tmp/env/bin/python" -m pip install --no-deps --only-binary :all: --require-hashes --no-cache-dir \
                --disable-pip-version-check -r "$TOOL_PINS" \
           && nice -n 10 "$tmp/env/bin/python" -m pip wheel --no-build-isolation --no-binary av --no-deps --require-hashes \
                --no-cache-dir --disable-pip-version-check -w "$tmp/out" -r "$AV_PINS"; } >"$log" 2>&1; then
      tail -n 25 "$log" >&2
      die "building PyAV $AV_VERSION against the FFmpeg of $where failed (log: $log)"
    fi
    built=$(first "$tmp"/out/av-*.whl)
    [ -n "$built" ] || die "building PyAV $AV_VERSION made no wheel (log: $log)"
    (cd "$tmp/out" && sha256sum "$(basename "$built")" >"$(basename "$built").sha256")
    mv "$built" "$built.sha256" "$cache"/
    rm -rf "$tmp"
    tmp=""
    wheel=$(first "$cache"/av-*.whl)
    echo "built $(basename "$wheel") in $((SECONDS - start)) s; cached in $cache with its sha256"
  else
    echo "using the cached wheel $wheel (sha256 checked)"
  fi
  "$PY" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel" \
    || die "pip install $wheel failed"
  pyav_ok || die "the PyAV just installed does not load the FFmpeg of $where with VA-API, without LD_LIBRARY_PATH (check: $PY -c 'import av; print(av.library_versions)')"
fi
"$PY" - <<'EOF'
import av, av.codec.hwaccel
print(f"PyAV {av.__version__}: FFmpeg libavcodec {'.'.join(map(str, av.library_versions['libavcodec']))}, "
      f"hw device types: {', '.join(av.codec.hwaccel.hwdevices_available())}")
EOF

# --- 5. the native bridge, for that FFmpeg (found beside the libavutil PyAV loads) ----------------
rc=0
bridge=$("$PY" -m zerocopy.bridge build 2>&1) || rc=$?
echo "$bridge"
if [ "$rc" != 0 ] || ! grep -q "built and verified" <<<"$bridge"; then
  die "$(grep -m1 -E 'not built|not needed|failed' <<<"$bridge" || tail -n1 <<<"$bridge")"
fi

# --- 6. doctor -----------------------------------------------------------------------------------
step "zerocopy doctor"
doctor=$("$VENV/bin/zerocopy" doctor) || die "zerocopy doctor failed"
echo "$doctor"
echo
echo "setup-gpu: done in $(( (SECONDS - start_all) / 60 ))m$(printf '%02d' $(( (SECONDS - start_all) % 60 )))s." \
  "PyAV $AV_VERSION with VA-API on the FFmpeg $ffmpeg_rel of $where, native bridge ok. Doctor's verdict:"
awk '/^paths:/ {on=1; next} on && NF' <<<"$doctor"
