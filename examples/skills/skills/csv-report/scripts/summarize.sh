#!/bin/sh
# Summarise a CSV file: rows, header, and the total of each numeric column.
# Usage: summarize.sh FILE.csv   (simple CSV: no quoted commas)
set -eu
[ $# -eq 1 ] || { echo "usage: summarize.sh FILE.csv" >&2; exit 2; }
awk -F, '
NR == 1 { n = NF; for (i = 1; i <= NF; i++) name[i] = $i; next }
{ rows++; for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9]+(\.[0-9]+)?$/) { sum[i] += $i; num[i] = 1 } }
END {
  printf "rows: %d\ncolumns: ", rows
  for (i = 1; i <= n; i++) printf "%s%s", name[i], (i < n ? ", " : "\n")
  for (i = 1; i <= n; i++) if (num[i]) printf "total %s: %g\n", name[i], sum[i]
}' "$1"
