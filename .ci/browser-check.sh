#!/usr/bin/env bash
# Opens HTML timelines in headless Chromium with #selftest: each page walks
# every step through the same handlers as its buttons, checks over the
# browser's own element boxes that the cursor and the event's row stay in
# view and that no two labels overlap (at every zoom), and writes the result
# into #selftest-result; script errors are written into the page as
# .script-error. Installs Debian's chromium when it is missing.
#
#   .ci/browser-check.sh [DIR | PAGE.html ...]
#
# With a directory (default: reports/), checks its figure-9-6 and the longest
# bundled traces: jepsen-etcd-lock (324 events, one lock) and
# redlock-gc-pause-during-acquisition (five lock nodes).
set -euo pipefail
cd "$(dirname "$0")/.."

pages=()
for arg in "${@:-reports}"; do
    if [ -d "$arg" ]; then
        for name in figure-9-6 jepsen-etcd-lock redlock-gc-pause-during-acquisition; do
            pages+=("$arg/$name.html")
        done
    else
        pages+=("$arg")
    fi
done
for page in "${pages[@]}"; do
    if [ ! -f "$page" ]; then
        echo "browser check: no page $page" >&2
        exit 1
    fi
done
if [ ! -x /usr/bin/chromium ]; then
    apt-get update
    apt-get install -y chromium
fi
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT

failed=0
for page in "${pages[@]}"; do
    # A fixed window: the self-test measures boxes on screen.
    dom="$(/usr/bin/chromium --headless --no-sandbox --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync \
        --no-first-run --user-data-dir="$profile" --window-size=1280,900 \
        --virtual-time-budget=20000 \
        --dump-dom "file://$(realpath "$page")#selftest" 2>/dev/null)"
    if grep -q 'class="script-error"' <<<"$dom"; then
        echo "browser check: script errors in $page:" >&2
        grep -o '<p class="script-error">[^<]*' <<<"$dom" >&2
        failed=1
        continue
    fi
    # The marker is assembled by the script, so the page's source never holds it.
    if ! grep -q '<div id="selftest-result">selftest ok' <<<"$dom"; then
        echo "browser check: $page did not pass its selftest:" >&2
        grep -o '<div id="selftest-result">[^<]*' <<<"$dom" >&2 || echo "(no result: the script did not run)" >&2
        failed=1
        continue
    fi
    grep -o '<div id="selftest-result">selftest ok[^<]*' <<<"$dom" | sed 's|^<div id="selftest-result">||' | sed "s|^|browser check: $page: |"
done
exit "$failed"
