#!/usr/bin/env bash
# System packages the project needs beyond PyPI: FFmpeg and libva development headers, used to build
# the native VA bridge (and, where PyAV's own FFmpeg has no headers, to test it against the system
# FFmpeg); Mosquitto, the real MQTT broker that the tests of --publish and serve start on a
# loopback port; and Chromium with its driver, the real browser that the tests of serve's page drive
# (tests/e2e/test_serve_page.py: selenium is given these two, and never fetches a browser of its own).
# Installs them with apt-get when running as root; otherwise says what to install.
set -euo pipefail
# ZEROCOPY_NO_BROWSER=1 (the container image: it serves the page, it does not test it) leaves the browser out.
pkgs=(pkg-config libavutil-dev libavfilter-dev libavcodec-dev libva-dev mosquitto mosquitto-clients)
[ "${ZEROCOPY_NO_BROWSER:-}" = 1 ] || pkgs+=(chromium chromium-driver)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "note: install ${missing[*]} (as root) to build and test the native VA bridge, serve and its page" >&2
fi
