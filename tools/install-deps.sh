#!/bin/sh
# Install every Debian package smokemorph needs to build, test and run.
# Idempotent: prints nothing and changes nothing when all are present.
# Works as root or through sudo.  Usage: tools/install-deps.sh [--check] [--farm]
# --farm also installs Slurm and munge, which only tests/test_slurm.c needs
# (it starts a one-node cluster); CI passes it. smokemorph-farm itself needs
# only the cluster's own sbatch and squeue.
set -eu

check=0
farm=0
for a in "$@"; do
    case $a in
        --check) check=1 ;;
        --farm) farm=1 ;;
        *) echo "install-deps: unknown option '$a' (usage: tools/install-deps.sh [--check] [--farm])" >&2; exit 2 ;;
    esac
done

# clang and its runtime (libFuzzer; only a Recommends of clang) build `make fuzz`
PKGS="gcc libc6-dev make pkg-config freeglut3-dev libglew-dev libpng-dev libegl-dev \
libgl-dev zlib1g-dev libjansson-dev libgl1-mesa-dri libegl-mesa0 libopenexr-dev libfreetype-dev fonts-dejavu-core xvfb xauth xdotool clang libclang-rt-14-dev mandoc"
# the farm test's cluster: slurmctld, slurmd, sbatch, squeue (slurm-wlm), munged (munge)
FARM_PKGS="slurm-wlm munge"
[ $farm -eq 1 ] && PKGS="$PKGS $FARM_PKGS"

missing=""
for p in $PKGS; do
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    case "$st" in
        ii*) ;;
        *) missing="$missing $p" ;;
    esac
done

[ -z "$missing" ] && exit 0

if [ $check -eq 1 ]; then
    echo "install-deps: missing packages:$missing" >&2
    exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "install-deps: need root or sudo to install:$missing" >&2
    exit 1
fi

echo "install-deps: installing:$missing" >&2
# apt-get without questions; sudo resets the environment, so it is told there
export DEBIAN_FRONTEND=noninteractive
apt() {
    if [ -n "$SUDO" ]; then $SUDO DEBIAN_FRONTEND=noninteractive apt-get "$@"; else apt-get "$@"; fi
}
apt update -qq >/dev/null
# shellcheck disable=SC2086
apt install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done" >&2
