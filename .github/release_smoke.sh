#!/usr/bin/env bash
# The installed wheel runs the mission commands: release_smoke.sh BIN_DIR, where BIN_DIR holds
# the `toolctl` of a fresh environment the wheel was installed into (the release workflow, and
# tests/release/test_release.py, run it). Works in an empty temporary directory; no network.
set -euo pipefail
bin="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export NO_COLOR=1
"$bin/toolctl" --version
"$bin/toolctl" init
"$bin/toolctl" validate
"$bin/toolctl" lint
"$bin/toolctl" test
"$bin/toolctl" run greet --input '{"name": "Ada"}'
"$bin/toolctl" export -f openai -o tools.openai.json
"$bin/toolctl" export -f mcp -o tools.mcp.json
"$bin/toolctl" schema -o tool.schema.json
test -s tools.openai.json && test -s tools.mcp.json && test -s tool.schema.json
echo "release_smoke: ok"
