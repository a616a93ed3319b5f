#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The ABI gate itself (tools/abi_check.sh, docs/abi.md), on a tiny library
# built in four versions: against a baseline of the first, a new function
# passes, while two struct fields swapped, a function removed and an enum
# value changed each fail.  (make abi-check runs the same gate on
# librngtrk against abi/librngtrk.abi.)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
command -v abidw >/dev/null 2>&1 || { echo "abi gate: abidw is missing (Debian: abigail-tools)"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc=${CC:-cc}

# version NAME STRUCT_FIELDS ENUM_VALUE EXTRA_DECL: a header and a library
version() {
    mkdir -p "$dir/$1"
    cat >"$dir/$1/t.h" <<EOT
#include <stdint.h>
typedef enum t_kind { T_A = 0, T_B = $3 } t_kind;
typedef struct t_spec { $2 } t_spec;
int t_use(const t_spec *spec, t_kind kind);
$4
EOT
    extra_def=""
    case $4 in *t_more*) extra_def="int t_more(void) { return 1; }" ;; esac
    case $5 in keep) keep_def="int t_gone(int x) { return x; }" ;; *) keep_def="" ;; esac
    cat >"$dir/$1/t.c" <<EOT
#include "t.h"
int t_use(const t_spec *spec, t_kind kind) { return (int)spec->a + (int)spec->b + (int)kind; }
$extra_def
$keep_def
EOT
    [ "$5" = keep ] && echo "int t_gone(int x);" >>"$dir/$1/t.h"
    $cc -g -shared -fPIC -o "$dir/$1/libt.so" "$dir/$1/t.c" || exit 1
}
version base "uint32_t a; uint64_t b;" 1 "" keep
version added "uint32_t a; uint64_t b;" 1 "int t_more(void);" keep
version swapped "uint64_t b; uint32_t a;" 1 "" keep
version removed "uint32_t a; uint64_t b;" 1 "" drop
version renumbered "uint32_t a; uint64_t b;" 2 "" keep
abidw --headers-dir "$dir/base" --no-corpus-path --no-comp-dir-path --drop-private-types --exported-interfaces-only \
    --drop-undefined-syms --no-show-locs --type-id-style hash --out-file "$dir/base.abi" "$dir/base/libt.so" || exit 1

fail=0
expect() {  # expect VERSION pass|fail
    if "$top/tools/abi_check.sh" "$dir/base.abi" "$dir/$1/libt.so" >"$dir/$1.log" 2>&1; then got=pass; else got=fail; fi
    [ "$got" = "$2" ] || { echo "FAIL: the gate says $got for '$1', want $2"; cat "$dir/$1.log"; fail=1; }
}
expect base pass
expect added pass
expect swapped fail
expect removed fail
expect renumbered fail
[ $fail -eq 0 ] && echo "abi gate: a new function passes; swapped fields, a removed function, a changed enum value fail"
exit $fail
