#!/bin/sh
# Rewrite the man page's option lists (smokemorph.1, from ".Ss Run mode" up
# to ".Sh ENVIRONMENT") from BINARY --help, whose option lines come from
# src/settings.def: one .Ss a section, one .It an option (make options-doc).
#   sh tools/options-man.sh build/smokemorph smokemorph.1
set -eu
bin=$1
man=$2
tmp=$man.tmp.$$
"$bin" --help | awk '
    function flush() { if (text != "") { print text "."; text = "" } }
    function out(s) { if (s ~ /^[.\047]/) s = "\\&" s; if (text != "") print text; text = s }
    /^Run mode:$/ { on = 1 }
    /^Examples:$/ { flush(); if (list) print ".El"; exit }
    !on { next }
    /^$/ { next }
    /^[^ ].*:$/ { flush(); if (list) print ".El"; sub(/:$/, ""); print ".Ss " $0; print ".Bl -tag -width Ds"; list = 1; next }
    /^                        / { sub(/^ +/, ""); out($0); next }
    /^  -/ {
        flush()
        line = substr($0, 3)
        if (length(line) >= 23 && substr($0, 24, 1) != " " && substr($0, 23, 1) == " ") {
            head = substr($0, 3, 21); rest = substr($0, 25)
        } else if (match(line, /  +/) && RSTART <= 23) {
            head = substr(line, 1, RSTART - 1); rest = substr(line, RSTART + RLENGTH)
        } else {
            head = substr($0, 3, 21); rest = substr($0, 25)
        }
        sub(/ +$/, "", head)
        n = split(head, w, " ")
        it = ".It"
        for (k = 1; k <= n; k++) {
            if (w[k] ~ /^-[a-z],$/) it = it " Fl " substr(w[k], 2, 1) " ,"
            else if (w[k] ~ /^--/) it = it " Fl -" substr(w[k], 3)
            else it = it " Ar " w[k]
        }
        print it
        out(rest)
        next
    }
' > "$tmp.opts"
awk -v opts="$tmp.opts" '
    /^\.Ss Run mode$/ { while ((getline line < opts) > 0) print line; skip = 1; next }
    skip && /^\.Sh / { skip = 0 }
    !skip { print }
' "$man" > "$tmp"
rm -f "$tmp.opts"
grep -q '^\.Ss Run mode$' "$tmp" || { rm -f "$tmp"; echo "options-man: no .Ss Run mode in $man" >&2; exit 1; }
mv "$tmp" "$man"
