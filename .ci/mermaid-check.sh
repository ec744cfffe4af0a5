#!/usr/bin/env bash
# Renders the Mermaid sequence diagram fencesim wrote in every DIR/*.md
# (default: the repository's reports/) with Mermaid itself (npm's `mermaid`,
# run by headless Chromium from a local page): a diagram GitHub would fail to
# draw fails CI. Needs Chromium (see browser-check.sh) and npm.
set -euo pipefail
dir="${1:+$(realpath "$1")}"
cd "$(dirname "$0")/.."
dir="${dir:-$PWD/reports}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm install --silent --no-audit --no-fund mermaid@11 >/dev/null)

python3 - "$work" "$dir"/*.md <<'PY'
import json, re, sys
work, files = sys.argv[1], sys.argv[2:]
# The diagram fencesim wrote is the fenced block right after its marker line
# (src/report/markdown.rs, SEQUENCE_MARKER). Text from a scenario cannot hold
# the marker (Markdown escaping turns `<` into `&lt;`), so a block planted in
# a description is never the one rendered here.
MARKER = "<!-- fencesim:sequence -->"
diagrams, problems = [], []
for f in files:
    if f.endswith("/index.md"):
        continue
    lines = open(f, encoding="utf-8").read().split("\n")
    at = [i for i, line in enumerate(lines) if line == MARKER]
    if len(at) != 1:
        problems.append("%s: %d sequence markers, want 1" % (f, len(at)))
        continue
    opening = lines[at[0] + 1] if at[0] + 1 < len(lines) else ""
    m = re.fullmatch(r"(`{3,})mermaid", opening)
    if not m:
        problems.append("%s: no ```mermaid fence after the marker" % f)
        continue
    try:
        end = lines.index(m.group(1), at[0] + 2)
    except ValueError:
        problems.append("%s: the mermaid fence is never closed" % f)
        continue
    diagrams.append((f, "\n".join(lines[at[0] + 2:end]) + "\n"))
if problems:
    sys.exit("mermaid check failed:\n" + "\n".join(problems))
# Embedded in a <script>: `<`, `>` and `&` as JSON escapes, so no text can
# close the script element (`</script>`) or open a comment in it.
embedded = (json.dumps(diagrams).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))
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
</script></body></html>""" % embedded
open(work + "/page.html", "w", encoding="utf-8").write(page)
PY

out="$(/usr/bin/chromium --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --user-data-dir="$work/profile" --virtual-time-budget=60000 \
    --dump-dom "file://$work/page.html" 2>/dev/null)"
result="$(sed -n '/<pre id="out">/,/<\/pre>/p' <<<"$out")"
count="$(ls "$dir"/*.md | grep -vc '/index.md$')"
oks="$(grep -cE '(^|>)ok ' <<<"$result" || true)"
if ! grep -q "done $count" <<<"$result" || [ "$oks" != "$count" ] \
    || grep -q '^\(ERROR\|EMPTY\)' <<<"$result"; then
    echo "mermaid check failed:" >&2
    echo "$result" >&2
    exit 1
fi
echo "mermaid check: $count diagrams rendered"
