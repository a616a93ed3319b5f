#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The rngtrk command: inspect prints each golden checkpoint as its canonical
# JSON; damaged or foreign files give one line on stderr and a non-zero exit.
set -u
cli=$1
vectors=$2
fail=0
for json in "$vectors"/checkpoints/*.json; do
    rtck=${json%.json}.rtck
    if ! "$cli" inspect "$rtck" | cmp -s - "$json"; then
        echo "FAIL: rngtrk inspect $rtck differs from $json"; fail=1
    fi
done
for bad in "$vectors"/checkpoints/invalid/*.rtck /nonexistent/file.rtck; do
    err=$("$cli" inspect "$bad" 2>&1 >/dev/null); code=$?
    lines=$(printf '%s\n' "$err" | wc -l)
    if [ $code -eq 0 ] || [ "$lines" -ne 1 ] || [ -z "$err" ]; then
        echo "FAIL: rngtrk inspect $bad: exit $code, stderr: $err"; fail=1
    fi
done
if [ "$("$cli" version)" = "" ]; then echo "FAIL: rngtrk version printed nothing"; fail=1; fi
"$cli" bogus 2>/dev/null && { echo "FAIL: unknown command accepted"; fail=1; }
[ $fail -eq 0 ] && echo "cli: ok"
exit $fail
