#!/bin/sh
# Compares the dynamic symbols (name@version, default or not) and version definitions of our
# libibverbs.so.1 with Debian's. Usage: check_symbols.sh READELF REFERENCE_SO OUR_SO
set -eu
readelf=$1 ref=$2 ours=$3
syms() {
  # Our own extension node (TMNIC_SIM_1.0, simulation control) is not part of the comparison.
  "$readelf" --dyn-syms -W "$1" | awk 'NR > 3 && $7 != "UND" && $7 != "ABS" && $8 !~ /@TMNIC_/ {print $4, $8}' | sort
}
vers() {
  "$readelf" -V -W "$1" | sed -n '/Version definition/,/Version needs/p' |
    grep -o 'Name: [^ ]*' | grep -v 'TMNIC_' | sort
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
syms "$ref" > "$tmp/ref.syms"
syms "$ours" > "$tmp/ours.syms"
vers "$ref" | grep -v 'libibverbs.so.1' > "$tmp/ref.vers"
vers "$ours" | grep -v 'libibverbs.so.1' > "$tmp/ours.vers"
status=0
if ! diff -u "$tmp/ref.syms" "$tmp/ours.syms"; then
  echo "FAIL: exported symbols differ from $ref (- reference, + ours)"
  status=1
fi
if ! diff -u "$tmp/ref.vers" "$tmp/ours.vers"; then
  echo "FAIL: version nodes differ"
  status=1
fi
# The data object must be a data object in ours too.
if ! "$readelf" --dyn-syms -W "$ours" | grep -q 'OBJECT.*verbs_allow_disassociate_destroy@@IBVERBS_PRIVATE_34'; then
  echo "FAIL: verbs_allow_disassociate_destroy is not an OBJECT"
  status=1
fi
[ $status -eq 0 ] && echo "OK: $(wc -l < "$tmp/ours.syms") symbols match"
exit $status
