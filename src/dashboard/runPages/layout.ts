import { html, raw } from 'hono/html';

// The page around every run view: the style, the header, and the script that swaps in the live
// updates the server pushes.

export type Escaped = ReturnType<typeof html>;

const STYLE = `
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#f6f7fa; --card:#fff; --run:#1f6feb; --pause:#b35900; --done:#1a7f37; --bad:#c62828; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
header { background:#1d2330; color:#fff; padding:10px 20px; display:flex; gap:20px; align-items:center; }
header a { color:#cfd8ea; text-decoration:none; } header a:hover { color:#fff; } header strong { font-size:16px; margin-right:12px; }
main { padding:16px 20px 40px; max-width:1400px; }
h1 { font-size:20px; margin:4px 0 2px; } h2 { font-size:16px; margin:22px 0 8px; } h3 { font-size:14px; margin:0 0 6px; }
.muted { color:var(--muted); } code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size:12.5px; }
table { border-collapse:collapse; width:100%; background:var(--card); border:1px solid var(--line); }
th, td { text-align:left; padding:6px 9px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#eef1f6; font-weight:600; font-size:12.5px; color:#39414f; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; color:#fff; background:#6b7385; }
.s-running { background:var(--run); } .s-paused { background:var(--pause); } .s-completed { background:var(--done); } .s-corrupt, .s-failed, .s-aborted { background:var(--bad); }
.s-prepared { background:#6b7385; } .s-activated { background:#7b50c7; } .s-stage-completed { background:#0f7b8a; } .s-sealed { background:#3d6fb6; } .s-consumed { background:var(--done); }
.repo { margin:18px 0 6px; } .repo .path { font-weight:600; }
.repository-group { margin:18px 0 6px; } .repository-group .worktree { margin-left:18px; }
form.filters { display:flex; gap:10px; align-items:center; margin:6px 0 10px; }
form.filters input, form.filters select { padding:5px 8px; border:1px solid var(--line); border-radius:4px; font:inherit; }
.pipeline { display:grid; grid-template-columns: repeat(7, minmax(150px, 1fr)); gap:8px; }
.stage { background:var(--card); border:1px solid var(--line); border-top:4px solid #c5cbd6; border-radius:4px; padding:8px; min-height:92px; }
.stage.st-done { border-top-color:var(--done); } .stage.st-current { border-top-color:var(--run); box-shadow:0 0 0 2px #1f6feb33; } .stage.st-next { border-top-color:#8fb3ef; border-style:dashed; }
.stage .state { font-size:11.5px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
.round { border-top:1px dashed var(--line); margin-top:6px; padding-top:5px; font-size:12.5px; }
.verdict-Approved { color:var(--done); font-weight:600; } .verdict-Changes { color:var(--pause); font-weight:600; } .verdict-Rejected { color:var(--bad); font-weight:600; }
.pause { background:#fff4e5; border:1px solid #f0b36b; border-radius:4px; padding:10px 14px; margin:12px 0; }
.pause pre { background:#1d2330; color:#e8edf6; padding:8px 10px; border-radius:4px; margin:6px 0; overflow-x:auto; }
.facts { display:flex; flex-wrap:wrap; gap:6px 22px; margin:6px 0; } .facts div span { color:var(--muted); margin-right:5px; }
.error { color:var(--bad); }
.note { color:var(--pause); } .stage .note { font-size:12px; margin-top:4px; } .outdated { color:var(--run); }
.files { overflow-wrap:anywhere; margin-top:3px; }
table.cost td.num { text-align:right; font-variant-numeric:tabular-nums; } table.cost th.group { background:#f6f8fb; color:var(--muted); font-weight:600; }
`;

const LIVE_SCRIPT = `
(function () {
  var live = document.getElementById('live');
  var source = document.body.getAttribute('data-events');
  if (!live || !source || !window.EventSource) return;
  var events = new EventSource(source);
  events.addEventListener('ready', function () { document.body.setAttribute('data-live', 'connected'); });
  events.addEventListener('update', function (event) {
    live.innerHTML = JSON.parse(event.data).html;
    document.body.setAttribute('data-updated', new Date().toISOString());
  });
  events.onerror = function () { document.body.setAttribute('data-live', 'reconnecting'); };
})();
`;

export function layout(title: string, body: Escaped, events?: string): Escaped {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${raw(STYLE)}</style></head>
<body data-events="${events ?? ''}" data-live="off">
<header><strong>baton</strong><a href="/runs">Runs</a><a href="/">Queues (bull-board)</a><a href="/metrics">Metrics</a></header>
<main>${body}</main>
${events ? html`<script>${raw(LIVE_SCRIPT)}</script>` : ''}
</body></html>`;
}
