#!/usr/bin/env bash
# Renders the Mermaid sequence diagram of every reports/*.md with Mermaid
# itself (npm's `mermaid`, run by headless Chromium from a local page): a
# diagram GitHub would fail to draw fails CI. Needs Chromium (see
# browser-check.sh) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm install --silent --no-audit --no-fund mermaid@11 >/dev/null)

python3 - "$work" reports/*.md <<'PY'
import json, re, sys
work, files = sys.argv[1], sys.argv[2:]
diagrams = []
for f in files:
    m = re.search(r"```mermaid\n(.*?)```", open(f, encoding="utf-8").read(), re.S)
    if m:
        diagrams.append((f, m.group(1)))
page = """<!doctype html><html><body><pre id="out">pending</pre>
<script src="node_modules/mermaid/dist/mermaid.min.js"></script>
<script>
mermaid.initialize({startOnLoad: false});
const diagrams = %s;
(async () => {
  const lines = [];
  for (const [i, [file, text]] of diagrams.entries()) {
    try {
      const r = await mermaid.render('d' + i, text);
      lines.push((r.svg.includes('<svg') ? 'ok ' : 'EMPTY ') + file);
    } catch (e) {
      lines.push('ERROR ' + file + ': ' + String(e).split('\\n')[0]);
    }
  }
  lines.push('done ' + diagrams.length);
  document.getElementById('out').textContent = lines.join('\\n');
})();
</script></body></html>""" % json.dumps(diagrams)
open(work + "/page.html", "w", encoding="utf-8").write(page)
PY

out="$(/usr/bin/chromium --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --user-data-dir="$work/profile" --virtual-time-budget=60000 \
    --dump-dom "file://$work/page.html" 2>/dev/null)"
result="$(sed -n '/<pre id="out">/,/<\/pre>/p' <<<"$out")"
count="$(ls reports/*.md | grep -vc '/index.md$')"
if ! grep -q "done $count" <<<"$result" || grep -q '^\(ERROR\|EMPTY\)' <<<"$result"; then
    echo "mermaid check failed:" >&2
    echo "$result" >&2
    exit 1
fi
echo "mermaid check: $count diagrams rendered"
