#!/usr/bin/env bash
# Prints the thread sanitizer's reports from `make test-tsan` (written to files by TSAN_OPTIONS'
# log_path, one per process), then a digest of each at the very end: what raced, by which threads, the
# top frames of both stacks. A CI log that keeps only its last lines then still says where a race is.
# Usage: tsan-digest.sh DIR   (exits 0; the test run's own status decides the step)
set -uo pipefail
dir=$1
shopt -s nullglob
reports=("$dir"/report.*)
[ ${#reports[@]} -eq 0 ] && exit 0
for report in "${reports[@]}"; do
    echo "=== thread sanitizer: $report"
    cat "$report"
done
echo "=== thread sanitizer digest (full reports above)"
for report in "${reports[@]}"; do
    # The warning line, each racing access, and the top three frames under each: file:line and name.
    awk '
        /WARNING: ThreadSanitizer/ { print; frames = 0; next }
        /^  (Previous )?([Rr]ead|[Ww]rite|[Mm]odifying access|[Aa]tomic).* by (main )?thread/ { print; frames = 3; next }
        /^    #[0-9]+ / && frames > 0 {
            line = $0
            sub(/^ +#[0-9]+ /, "", line)
            sub(/ \(BuildId: [0-9a-f]+\)$/, "", line)
            sub(/ \([^()]*\+0x[0-9a-f]+\)$/, "", line)
            name = line; where = ""
            if (match(line, / [^ ]+$/)) { where = substr(line, RSTART + 1); name = substr(line, 1, RSTART - 1) }
            n = split(where, parts, "/"); where = parts[n]
            if (where == "<null>") where = ""
            print "      " (where != "" ? where : "?") "  " name
            frames--; next
        }
        /^ ?[A-Z]|^  [A-Z]|^$/ { frames = 0 }
        /^SUMMARY: ThreadSanitizer/ { print }
    ' "$report"
done | if command -v swift > /dev/null; then swift demangle --simplified; else cat; fi | cut -c1-200
grep -h "^ThreadSanitizer: reported" "${reports[@]}"
exit 0
