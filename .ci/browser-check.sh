#!/usr/bin/env bash
# Opens reports/figure-9-6.html in headless Chromium with #selftest: the page
# walks every step through the same handlers as its buttons and writes the
# result into #selftest-result; script errors are written into the page as
# .script-error. Installs Debian's chromium when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

page="${1:-reports/figure-9-6.html}"
if [ ! -x /usr/bin/chromium ]; then
    apt-get update
    apt-get install -y chromium
fi
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
dom="$(/usr/bin/chromium --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --user-data-dir="$profile" --virtual-time-budget=5000 \
    --dump-dom "file://$(realpath "$page")#selftest" 2>/dev/null)"

if grep -q 'class="script-error"' <<<"$dom"; then
    echo "browser check: script errors in $page:" >&2
    grep -o '<p class="script-error">[^<]*' <<<"$dom" >&2
    exit 1
fi
# The marker is assembled by the script, so the page's source never holds it.
if ! grep -q '<div id="selftest-result">selftest ok' <<<"$dom"; then
    echo "browser check: $page did not pass its selftest:" >&2
    grep -o '<div id="selftest-result">[^<]*' <<<"$dom" >&2 || echo "(no result: the script did not run)" >&2
    exit 1
fi
grep -o '<div id="selftest-result">selftest ok[^<]*' <<<"$dom" | sed 's|^<div id="selftest-result">||' | sed "s|^|browser check: $page: |"
