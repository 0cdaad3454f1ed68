#!/bin/sh
# Regenerate the bundled target images: 256x256, 8-bit grey PNG, white = smoke.
# Usage: sh tools/make-targets.sh MKTARGETS OUTDIR   (what `make targets` runs)
# Coordinates are in units of the image side (see `mktargets --help`); every
# shape is softened by a 2 px Gaussian so the smoke has a soft edge to find.
set -eu

MK=${1:-build/tools/mktargets}
OUT=${2:-targets}

if [ ! -x "$MK" ]; then
    echo "make-targets: $MK is not an executable; run make $MK" >&2
    exit 1
fi
mkdir -p "$OUT"

# name, then the shapes
t() {
    name=$1
    shift
    "$MK" -o "$OUT/$name.png" --size 256x256 --blur 2 "$@"
    echo "  $OUT/$name.png"
}

# the default starting smoke: a soft disc low in the frame
t blob         disc:0.5,0.7,0.2
# the default target: a five-pointed star (its box centred on the frame)
t star         star:0.5,0.545,0.34,0.14,5
t ring         ring:0.5,0.5,0.26,0.09
t square       rect-outline:0.26,0.26,0.74,0.74,0.09
t heart        heart:0.5,0.5,0.3
t moon         disc:0.5,0.5,0.3 disc:0.63,0.4,0.26:sub
t cross        rect:0.42,0.2,0.58,0.8 rect:0.2,0.42,0.8,0.58
t text-smoke   text:0.5,0.5,0.16,SMOKE:w=0.24
t text-hi      text:0.5,0.5,0.36,HI:w=0.2
t two-discs    disc:0.3,0.5,0.15 disc:0.7,0.5,0.15
t diamond      polygon:0.5,0.18,0.8,0.5,0.5,0.82,0.2,0.5
t bars         rect:0.2,0.22,0.8,0.34 rect:0.2,0.44,0.8,0.56 rect:0.2,0.66,0.8,0.78
# yin and yang: a disc of radius 0.4 cut along an S of two half-size discs,
# each half with a dot of the other; yang is yin turned half round
# (scenes/yin-yang.json: two coloured smokes swap places)
t yin          disc:0.5,0.5,0.4 rect:0.5,0,1,1:sub disc:0.5,0.3,0.2 disc:0.5,0.7,0.2:sub \
               disc:0.5,0.3,0.065:sub disc:0.5,0.7,0.065
t yang         disc:0.5,0.5,0.4 rect:0,0,0.5,1:sub disc:0.5,0.7,0.2 disc:0.5,0.3,0.2:sub \
               disc:0.5,0.7,0.065:sub disc:0.5,0.3,0.065
