#!/usr/bin/env bash
# The project's own FFmpeg, for systems whose FFmpeg is older than PyAV >= 17 needs (< 8: Debian 12 and 13,
# Ubuntu 22.04 and 24.04). scripts/setup-gpu.sh runs it; PyAV and the native bridge are then built against it.
#
#   scripts/ffmpeg-build.sh decide [FFMPEG_MAJOR]   "system" or "build", then why: which FFmpeg setup-gpu uses
#                                                   (FFMPEG_MAJOR: the system's, e.g. 5; default: found here)
#   scripts/ffmpeg-build.sh packages                the Debian/Ubuntu packages the build needs (apt-get names),
#                                                   then "optional:" and the ones it uses where they exist
#   scripts/ffmpeg-build.sh flags                   the configure flags for this machine
#   scripts/ffmpeg-build.sh prefix                  the install prefix of those flags; exit 0 if it is built
#   scripts/ffmpeg-build.sh fingerprint             what the build depends on (its sha256 names the prefix)
#   scripts/ffmpeg-build.sh build                   fetch, check, configure, make, install: once, then cached
#   scripts/ffmpeg-build.sh check                   exit 0 if built, or the archive is cached or reachable,
#                                                   else print why it cannot be built here
#
# What it builds: the pinned FFmpeg release (FFMPEG_VERSION, its archive checked by FFMPEG_SHA256 before it is
# unpacked), shared libraries only, no programs, no docs, nothing autodetected (the flags alone decide what
# is in it), with VA-API and the external libraries named in `flags`. Installed into a prefix of its own in
# the user's cache, ${ZEROCOPY_FFMPEG_CACHE:-${XDG_CACHE_HOME:-~/.cache}/zerocopy/ffmpeg}/ffmpeg-VERSION-HASH
# (HASH: of the flags, the archive, the compiler, the distribution and the external libraries' versions, so a
# change of any rebuilds into a new prefix). The libraries are linked with -rpath to that prefix's lib/, and
# PyAV and the bridge are linked the same way, so they load this FFmpeg without LD_LIBRARY_PATH.
#
# Safe to interrupt: it compiles in a folder of its own, installs into a staging folder, renames that into
# place and writes the stamp last; a prefix without its stamp is not used, and a later run starts again
# from a clean folder. A built prefix is never rebuilt. make runs under nice with -j$(nproc); its output
# goes to a log, and a progress line is printed every ZEROCOPY_PROGRESS_EVERY seconds (default 30).
#
# Environment: ZEROCOPY_FFMPEG (auto|system|build, default auto: build only where the system's FFmpeg is
# older than 8), ZEROCOPY_FFMPEG_CACHE, ZEROCOPY_FFMPEG_URL (where to fetch the pinned archive instead of
# upstream's release and Debian's copy of it; it must have the same sha256), ZEROCOPY_DEBIAN_MIRROR (default:
# the Debian mirror apt uses, else http://deb.debian.org/debian).
set -euo pipefail

FFMPEG_VERSION=9.0.2
# sha256 of ffmpeg-9.0.2.tar.xz, the upstream release archive; Debian's ffmpeg_9.0.2.orig.tar.xz is the same
# file (Debian's signed Sources index for "forky" lists this sha256, and ships upstream's signature with it).
FFMPEG_SHA256=8c3850283eb25fa026482078a04051e0be17347b09ef81a0849bec15a96e002e
MIN_FFMPEG=8  # PyAV >= 17 (HWAccel is_hw_owned) builds only against FFmpeg >= 8
# Bump when the recipe below changes in a way the flags do not show: every cached build is then rebuilt.
RECIPE=1
STAMP=.zerocopy-ffmpeg

# Needed, with their Debian/Ubuntu names: the toolchain, VA-API (libva, libdrm), zlib (PNG, compressed MP4
# headers), TLS for https/rtsps (GnuTLS: LGPL, so the build stays distributable) and x264, which the annotated
# --output video (and the tests' clips) are encoded with.
REQUIRED_DEBS=(build-essential pkg-config nasm xz-utils libva-dev libdrm-dev zlib1g-dev libgnutls28-dev libx264-dev)
# Used where the distribution has them (new enough): AV1 decoding on the CPU (dav1d >= 1.0: the software
# fallback of an AV1 stream; FFmpeg's own av1 decoder only decodes on a GPU), the encoders the tests and the
# sample clips use besides x264 (x265, VP9, SVT-AV1), and SRT cameras.
OPTIONAL_DEBS=(libdav1d-dev libx265-dev libvpx-dev libsvtav1enc-dev libsrt-gnutls-dev)
# pkg-config module, the version FFmpeg 9's configure requires, and the flag that enables it.
OPTIONAL_LIBS=("dav1d 1.0.0 --enable-libdav1d" "x265 0 --enable-libx265" "vpx 1.4.0 --enable-libvpx"
               "SvtAv1Enc 0.9.0 --enable-libsvtav1" "srt 1.3.0 --enable-libsrt")

SELF=$(readlink -f "$0")
CACHE=${ZEROCOPY_FFMPEG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zerocopy/ffmpeg}
EVERY=${ZEROCOPY_PROGRESS_EVERY:-30}

die() { echo "ffmpeg-build: FAILED: $*" >&2; exit 1; }
say() { echo "ffmpeg-build: $*" >&2; }  # stdout carries only what a command answers
took() { local s=$((SECONDS - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# ---- which FFmpeg ------------------------------------------------------------------------------------
# The system FFmpeg's major release: from pkg-config (its -dev packages installed), else from apt's candidate
# for libavcodec-dev (e.g. 7:5.1.9-0+deb12u1 -> 5); empty when neither knows.
system_major() {
  local v
  if command -v pkg-config >/dev/null && v=$(pkg-config --modversion libavcodec 2>/dev/null); then
    v=${v%%.*}  # libavcodec 59 = FFmpeg 5, ... 62 = FFmpeg 8, 63 = FFmpeg 9
    [ "$v" -ge 59 ] 2>/dev/null && { echo $((v - 54)); return; }
    echo 4; return
  fi
  if command -v apt-cache >/dev/null; then
    v=$(apt-cache policy libavcodec-dev 2>/dev/null | awk '/Candidate:/ {print $2}')
    v=$(sed -E 's/^[0-9]+://; s/[^0-9].*//' <<<"${v:-}")
    [ -n "$v" ] && { echo "$v"; return; }
  fi
  echo ""
}

decide() {  # decide [MAJOR]: prints "system REASON" or "build REASON"
  local mode=${ZEROCOPY_FFMPEG:-auto} major
  if [ $# -gt 0 ]; then major=$1; else major=$(system_major); fi
  case $mode in
    system) echo "system ZEROCOPY_FFMPEG=system: the system's FFmpeg${major:+ $major}, whatever its version" ;;
    build) echo "build ZEROCOPY_FFMPEG=build: FFmpeg $FFMPEG_VERSION built for zerocopy" ;;
    auto)
      if [ -z "$major" ]; then
        echo "build no system FFmpeg found (neither pkg-config nor apt knows libavcodec): FFmpeg $FFMPEG_VERSION built for zerocopy"
      elif [ "$major" -ge "$MIN_FFMPEG" ] 2>/dev/null; then
        echo "system the system's FFmpeg $major is >= $MIN_FFMPEG"
      else
        echo "build the system's FFmpeg $major is older than the $MIN_FFMPEG PyAV >= 17 needs: FFmpeg $FFMPEG_VERSION built for zerocopy"
      fi ;;
    *) echo "ffmpeg-build: ZEROCOPY_FFMPEG must be auto, system or build (not '$mode')" >&2; return 2 ;;
  esac
}

# ---- what it is built with ----------------------------------------------------------------------------
packages() {  # the required packages, then "optional:" and the optional ones apt can install here
  local p have=()
  for p in "${OPTIONAL_DEBS[@]}"; do
    if ! command -v apt-cache >/dev/null \
       || [ -n "$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')" ]; then
      have+=("$p")
    fi
  done
  echo "${REQUIRED_DEBS[*]} optional: ${have[*]}"
}

optional_flags() {  # the optional libraries pkg-config finds at the version FFmpeg needs
  local entry mod min flag
  for entry in "${OPTIONAL_LIBS[@]}"; do
    read -r mod min flag <<<"$entry"
    if pkg-config --atleast-version="$min" "$mod" 2>/dev/null; then echo "$flag"; fi
  done
}

base_flags() {  # the flags without --prefix and the rpath (both follow from the hash of these)
  printf '%s\n' --enable-shared --disable-static --disable-programs --disable-doc --disable-debug \
    --disable-autodetect --enable-pthreads --enable-gpl --enable-vaapi --enable-libdrm --enable-zlib \
    --enable-gnutls --enable-libx264
  optional_flags
}

missing_required() {  # pkg-config modules (and tools) the required flags need that are not here
  local m
  command -v pkg-config >/dev/null || { echo "pkg-config"; return; }
  for m in libva libva-drm libdrm zlib gnutls x264; do pkg-config --exists "$m" || echo "$m"; done
  command -v nasm >/dev/null || echo "nasm"
  command -v cc >/dev/null || echo "a C compiler (cc)"
  command -v make >/dev/null || echo "make"
  command -v xz >/dev/null || echo "xz"
  return 0
}

# What the build depends on; its hash names the prefix. Every external library's version is in it, so an
# upgrade that could change their ABI rebuilds against the new one.
fingerprint() {
  local m os=unknown
  # shellcheck source=/dev/null
  [ -r /etc/os-release ] && os=$(. /etc/os-release && echo "${ID:-}-${VERSION_ID:-}")
  echo "recipe=$RECIPE ffmpeg=$FFMPEG_VERSION sha256=$FFMPEG_SHA256 os=$os arch=$(uname -m)"
  echo "cc=$(cc -dumpfullversion -dumpversion 2>/dev/null | head -n1) nasm=$(nasm -v 2>/dev/null | awk '{print $3}')"
  for m in libva libva-drm libdrm zlib gnutls x264 dav1d x265 vpx SvtAv1Enc srt; do
    echo "$m=$(pkg-config --modversion "$m" 2>/dev/null || echo none)"
  done
  base_flags
}

prefix_path() {
  echo "$CACHE/ffmpeg-$FFMPEG_VERSION-$(fingerprint | sha256sum | cut -c1-12)"
}

flags() {
  local prefix; prefix=$(prefix_path)
  base_flags
  printf '%s\n' "--prefix=$prefix" "--extra-ldflags=-Wl,-rpath,$prefix/lib"
}

built() {  # built PREFIX: its stamp says this recipe, and the libraries are there
  [ -f "$1/$STAMP" ] && [ "$(head -n1 "$1/$STAMP")" = "$(fingerprint | sha256sum | cut -c1-64)" ] \
    && [ -n "$(compgen -G "$1/lib/libavutil.so.*")" ] && [ -f "$1/lib/pkgconfig/libavutil.pc" ]
}

# ---- fetching the archive -----------------------------------------------------------------------------
debian_mirror() {
  if [ -n "${ZEROCOPY_DEBIAN_MIRROR:-}" ]; then echo "${ZEROCOPY_DEBIAN_MIRROR%/}"; return; fi
  local m=""
  if command -v apt-get >/dev/null; then
    # shellcheck disable=SC2016  # apt's own $(FIELD) syntax
    m=$(apt-get indextargets --format '$(REPO_URI)|$(LABEL)|$(TARGET_OF)' 2>/dev/null \
        | awk -F'|' '$2 == "Debian" && $3 == "deb" {print $1; exit}')
  fi
  m=${m%/}
  echo "${m:-http://deb.debian.org/debian}"
}

archive_urls() {  # upstream's release, then Debian's copy of the very same file (or only ZEROCOPY_FFMPEG_URL)
  if [ -n "${ZEROCOPY_FFMPEG_URL:-}" ]; then echo "$ZEROCOPY_FFMPEG_URL"; return; fi
  echo "https://ffmpeg.org/releases/ffmpeg-$FFMPEG_VERSION.tar.xz"
  echo "$(debian_mirror)/pool/main/f/ffmpeg/ffmpeg_$FFMPEG_VERSION.orig.tar.xz"
}

download() {  # download URL FILE
  if command -v curl >/dev/null; then
    curl -fsSL --connect-timeout 20 --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null; then
    wget -q -T 20 -t 2 -O "$2" "$1"
  else
    python3 - "$1" "$2" <<'EOF'
import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=60) as r, open(sys.argv[2], "wb") as f:
    shutil.copyfileobj(r, f)
EOF
  fi
}

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$FFMPEG_SHA256" ]; }

# The checked archive in $CACHE/src (downloaded once; a file there with another sha256 is removed).
fetch() {
  local archive="$CACHE/src/ffmpeg-$FFMPEG_VERSION.tar.xz" url part got tried=()
  mkdir -p "$CACHE/src"
  rm -f "$archive".part.*  # left by an interrupted download
  if [ -f "$archive" ] && ! sha_ok "$archive"; then
    say "removing $archive: its sha256 is not the pinned $FFMPEG_SHA256"
    rm -f "$archive"
  fi
  if [ ! -f "$archive" ]; then
    part="$archive.part.$$"
    while read -r url; do
      say "downloading $url"
      if download "$url" "$part" 2>/dev/null; then
        if sha_ok "$part"; then mv "$part" "$archive"; break; fi
        got=$(sha256sum "$part" | cut -d' ' -f1)
        say "  refused: its sha256 is $got, not the pinned $FFMPEG_SHA256"
        tried+=("$url (wrong sha256 $got)")
      else
        say "  not reachable"
        tried+=("$url (not reachable)")
      fi
      rm -f "$part"
    done < <(archive_urls)
    rm -f "$part"
    if [ ! -f "$archive" ]; then
      printf 'ffmpeg-build: tried:\n' >&2
      printf '  %s\n' "${tried[@]}" >&2
      die "no copy of ffmpeg-$FFMPEG_VERSION.tar.xz with sha256 $FFMPEG_SHA256 could be had; put one at $archive (or set ZEROCOPY_FFMPEG_URL)"
    fi
  fi
  echo "$archive"
}

# ---- the build ----------------------------------------------------------------------------------------
work="" make_pid=""
cleanup() {
  if [ -n "$make_pid" ]; then kill "$make_pid" 2>/dev/null || true; wait "$make_pid" 2>/dev/null || true; fi
  if [ -n "$work" ]; then rm -rf "$work"; fi
}

# make in the background, with a line every $EVERY seconds: files compiled of those to compile.
make_with_progress() {  # make_with_progress DIR LOG TOTAL
  local dir=$1 log=$2 total=$3 start=$SECONDS last=$SECONDS done_n rc=0
  (cd "$dir" && exec nice -n 10 make -j"$(nproc)") >>"$log" 2>&1 &
  make_pid=$!
  while kill -0 "$make_pid" 2>/dev/null; do
    sleep 2
    if [ $((SECONDS - last)) -ge "$EVERY" ]; then
      last=$SECONDS
      done_n=$(grep -cE '^(CC|CXX|AS|X86ASM)[[:space:]]' "$log" || true)
      if [ "$total" -gt 0 ]; then
        say "  compiled $done_n of $total files ($((done_n * 100 / total)) %), $(took "$start")"
      else
        say "  compiled $done_n files, $(took "$start")"
      fi
    fi
  done
  wait "$make_pid" || rc=$?
  make_pid=""
  return "$rc"
}

build() {
  local prefix archive log t0=$SECONDS t total missing
  prefix=$(prefix_path)
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"
  if command -v flock >/dev/null && ! flock -n 9; then
    say "another build is running in $CACHE; waiting for it"
    flock 9
  fi
  if built "$prefix"; then
    say "FFmpeg $FFMPEG_VERSION is already built in $prefix ($(sed -n 2p "$prefix/$STAMP"))"
    echo "$prefix"
    return 0
  fi
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if [ -e "$prefix" ]; then
    say "removing $prefix: an earlier build did not finish"
    rm -rf "$prefix"
  fi
  rm -rf "$prefix.build"  # an interrupted build starts again from a clean folder
  archive=$(fetch)
  missing=$(missing_required | paste -sd, - | sed 's/,/, /g')
  [ -z "$missing" ] || die "missing: $missing (Debian/Ubuntu: apt-get install --no-install-recommends ${REQUIRED_DEBS[*]})"
  work="$prefix.build"
  mkdir -p "$work"
  log="$prefix.log"
  : >"$log"
  say "FFmpeg $FFMPEG_VERSION ($(basename "$archive"), sha256 checked) into $prefix; log: $log"

  t=$SECONDS
  say "[1/4] unpacking"
  tar -xJf "$archive" -C "$work" || die "cannot unpack $archive"
  local src="$work/ffmpeg-$FFMPEG_VERSION"
  say "[2/4] configure $(base_flags | tr '\n' ' ')"
  local conf=()
  mapfile -t conf < <(flags)
  if ! (cd "$src" && nice -n 10 ./configure "${conf[@]}") >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    tail -n 30 "$src/ffbuild/config.log" >&2 2>/dev/null || true
    die "configure failed (log: $log; details in $src/ffbuild/config.log)"
  fi
  say "      done in $(took "$t")"

  t=$SECONDS
  # The files make will compile: its dry run, one "CC"/"AS"/"X86ASM" line per object.
  total=$( (cd "$src" && make -n 2>/dev/null) | grep -cE '^printf "(CC|CXX|AS|X86ASM)\\t' || true)
  say "[3/4] make -j$(nproc) under nice: $total files (about 5 minutes on 2 cores; a line every ${EVERY} s)"
  if ! make_with_progress "$src" "$log" "$total"; then
    tail -n 25 "$log" >&2
    die "make failed after $(took "$t") (log: $log)"
  fi
  say "      done in $(took "$t")"

  say "[4/4] install"
  (cd "$src" && make install DESTDIR="$work/stage") >>"$log" 2>&1 || { tail -n 20 "$log" >&2; die "make install failed (log: $log)"; }
  [ -d "$work/stage$prefix/lib" ] || die "make install left no $work/stage$prefix/lib"
  mv "$work/stage$prefix" "$prefix"
  rm -rf "$work"
  work=""
  check_installed "$prefix"
  printf '%s\n%s\n' "$(fingerprint | sha256sum | cut -c1-64)" \
    "built $(date -u +%Y-%m-%dT%H:%MZ) in $(took "$t0") on $(nproc) cores" >"$prefix/$STAMP"
  fingerprint >"$prefix/.zerocopy-ffmpeg-recipe"
  say "FFmpeg $FFMPEG_VERSION built in $(took "$t0") into $prefix"
  echo "$prefix"
}

# The installed libraries find each other and their dependencies through their rpath alone.
check_installed() {
  local prefix=$1 so deps why=""
  so=$(compgen -G "$prefix/lib/libavcodec.so.*" | head -n1 || true)
  if [ -z "$so" ]; then
    why="no libavcodec.so in $prefix/lib"
  elif ! readelf -d "$so" 2>/dev/null | grep -qF "[$prefix/lib]"; then
    why="$so is not linked with the rpath $prefix/lib"
  else
    deps=$(env -u LD_LIBRARY_PATH ldd "$so" 2>&1 || true)
    if grep -q "not found" <<<"$deps"; then
      why="$so cannot find: $(grep "not found" <<<"$deps" | awk '{print $1}' | paste -sd' ' -)"
    elif ! grep "libavutil" <<<"$deps" | grep -qF "$prefix/lib/libavutil"; then
      why="$so does not load the libavutil beside it: $(grep libavutil <<<"$deps")"
    elif ! grep -q "libva.so" <<<"$deps"; then
      why="$so does not link libva (no VA-API)"
    elif ! PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists libavutil libavcodec libavfilter; then
      why="pkg-config does not find the .pc files in $prefix/lib/pkgconfig"
    fi
  fi
  if [ -n "$why" ]; then rm -rf "$prefix"; die "$why"; fi
}

check() {  # can `build` succeed here, as far as the archive goes?
  local p url
  p=$(prefix_path)
  built "$p" && return 0
  sha_ok "$CACHE/src/ffmpeg-$FFMPEG_VERSION.tar.xz" && return 0
  while read -r url; do
    if command -v curl >/dev/null; then
      curl -fsSIL --connect-timeout 10 --max-time 20 -o /dev/null "$url" 2>/dev/null && return 0
    elif command -v wget >/dev/null; then
      wget -q --spider -T 20 -t 1 "$url" 2>/dev/null && return 0
    else
      return 0  # no way to tell before trying
    fi
  done < <(archive_urls)
  echo "no copy of ffmpeg-$FFMPEG_VERSION.tar.xz is cached or reachable ($(archive_urls | paste -sd' ' -))"
  return 1
}

case "${1:-}" in
  decide) shift; decide "$@" ;;
  packages) packages ;;
  flags) flags ;;
  prefix) p=$(prefix_path); echo "$p"; built "$p" ;;
  fingerprint) fingerprint ;;
  build) build ;;
  check) check ;;
  *) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
