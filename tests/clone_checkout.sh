#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# clone_checkout.sh DEST: a clone of this repository at DEST as a user would
# get it, with this working tree's uncommitted changes and untracked files
# (not the ignored ones) carried over, so that a test of "a new user's
# clone" tests the code being worked on.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$1
git clone -q "$top" "$dest"
git -C "$top" diff HEAD --binary | { patch=$(cat); [ -z "$patch" ] || printf '%s\n' "$patch" | git -C "$dest" apply; }
(cd "$top" && git ls-files --others --exclude-standard -z | xargs -0 -r cp --parents -t "$dest")
