#!/bin/sh
# Write smokemorph's bash completion to stdout, generated from the option
# lines of `BINARY --help` (the Makefile runs it at build time, so the
# completion knows the options of the binary it was built with):
#   - every --option completes after "-";
#   - an option whose argument is FILE completes file names, DIR folder
#     names, and a list of lower-case words ("balance|fattal") those words;
#     any other argument (N, WxH, ...) completes nothing;
#   - any other word (the images) completes file names.
# Usage: tools/gen-completion.sh build/smokemorph > smokemorph.bash
set -eu
bin=${1:?usage: tools/gen-completion.sh BINARY}
help=$("$bin" --help)

# An option line: "  -q, --quiet   text", "  --grid N|WxH   text", or a long
# one whose text follows after one space ("  --allow-scene-outputs let ...").
# Prints "NAME KIND [WORDS]" for each: KIND none, file, dir, words or other.
table=$(printf '%s\n' "$help" | awk '
    /^  (-[a-z], )?--[a-z0-9-]+/ {
        line = substr($0, 3)
        sub(/^-[a-z], /, "", line)
        name = line; sub(/ .*/, "", name)
        rest = substr(line, length(name) + 1)
        arg = ""
        if (rest ~ /^ [^ ]+(  |$)/) { arg = substr(rest, 2); sub(/ .*/, "", arg) }
        if (arg == "") kind = "none"
        else if (arg == "FILE") kind = "file"
        else if (arg == "DIR") kind = "dir"
        else if (arg ~ /^[a-z0-9]+(\|[a-z0-9]+)+$/) { kind = "words"; gsub(/\|/, " ", arg) }
        else kind = "other"
        print name, kind, (kind == "words" ? arg : "")
    }')
[ -n "$table" ] || { echo "gen-completion: no options in '$bin --help'" >&2; exit 1; }

# the names of one kind, as a case pattern ("--a|--b"), empty when none
names() { printf '%s\n' "$table" | awk -v k="$1" '$2 == k { printf "%s%s", sep, $1; sep = "|" }'; }
all=$(printf '%s\n' "$table" | awk '{ printf "%s%s", sep, $1; sep = " " }')

cat <<OUT
# bash completion for smokemorph, generated from \`smokemorph --help\` by
# tools/gen-completion.sh: rebuild rather than edit.
_smokemorph()
{
    local cur=\${COMP_WORDS[COMP_CWORD]} prev=
    [ "\$COMP_CWORD" -gt 0 ] && prev=\${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    case "\$prev" in
OUT
n=$(names file);  [ -z "$n" ] || echo "        $n) mapfile -t COMPREPLY < <(compgen -f -- \"\$cur\"); return ;;"
n=$(names dir);   [ -z "$n" ] || echo "        $n) mapfile -t COMPREPLY < <(compgen -d -- \"\$cur\"); return ;;"
printf '%s\n' "$table" | awk '$2 == "words" {
    w = $3; for (i = 4; i <= NF; i++) w = w " " $i
    printf "        %s) mapfile -t COMPREPLY < <(compgen -W \"%s\" -- \"$cur\"); return ;;\n", $1, w }'
n=$(names other); [ -z "$n" ] || echo "        $n) return ;;"
cat <<OUT
    esac
    case "\$cur" in
        -*) mapfile -t COMPREPLY < <(compgen -W "$all" -- "\$cur") ;;
        *) mapfile -t COMPREPLY < <(compgen -f -- "\$cur") ;;
    esac
}
complete -o filenames -F _smokemorph smokemorph
OUT
