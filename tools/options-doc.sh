#!/bin/sh
# Rewrite docs/MANUAL.md's "## All options" block from BINARY --help (its
# "Run mode:" .. "Messages:" sections, which come from src/settings.def):
#   sh tools/options-doc.sh build/smokemorph docs/MANUAL.md     (make options-doc)
# test_docs checks that the two agree.
set -eu
bin=$1
doc=$2
tmp=$doc.tmp.$$
"$bin" --help | awk '/^Run mode:/ { on = 1 } /^Examples:/ { on = 0 } on' | sed -e '$ { /^$/ d; }' > "$tmp.help"
awk -v help="$tmp.help" '
    state == 0 && /^## All options$/ { state = 1 }
    state == 1 && /^```$/ { print; while ((getline line < help) > 0) print line; state = 2; next }
    state == 2 { if (/^```$/) { print; state = 3 } ; next }
    { print }
    END { if (state != 3) { print "options-doc: no \"## All options\" block with a fence" > "/dev/stderr"; exit 1 } }
' "$doc" > "$tmp"
rm -f "$tmp.help"
mv "$tmp" "$doc"
