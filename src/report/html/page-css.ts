/** The stylesheet of `reports/index.html` (inline; no fonts or images are fetched). */
export const PAGE_CSS = `
:root { --fg: #1b1f24; --muted: #5b6470; --line: #d9dee4; --bg: #ffffff; --soft: #f5f7f9; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg); background: var(--bg); }
nav.top { position: sticky; top: 0; z-index: 5; display: flex; gap: 18px; align-items: baseline; padding: 8px 24px; background: #14324f; color: #fff; }
nav.top a { color: #d6e9ff; text-decoration: none; }
nav.top .brand { font-weight: bold; }
nav.top .muted { color: #a9bdd1; margin-left: auto; font-size: 13px; }
main { max-width: 1180px; margin: 0 auto; padding: 8px 24px 80px; }
h1 { font-size: 26px; margin: 18px 0 10px; }
h2 { font-size: 21px; margin: 34px 0 10px; padding-top: 8px; border-top: 1px solid var(--line); }
h3 { font-size: 17px; margin: 22px 0 8px; }
p, li { max-width: 980px; }
blockquote { margin: 12px 0; padding: 8px 14px; border-left: 4px solid var(--accent); background: var(--soft); }
blockquote p { margin: 0; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; background: var(--soft); padding: 0 3px; border-radius: 3px; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; margin: 10px 0 16px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; vertical-align: top; }
th { background: var(--soft); }
th button.sort { all: unset; cursor: pointer; font-weight: bold; }
th button.sort::after { content: " \\2195"; color: #9aa3ad; font-weight: normal; }
th[aria-sort=ascending] button.sort::after { content: " \\2191"; color: var(--fg); }
th[aria-sort=descending] button.sort::after { content: " \\2193"; color: var(--fg); }
.a-right { text-align: right; } .a-center { text-align: center; } .a-left { text-align: left; }
td sub { font-size: 11px; color: var(--muted); }
a.count { color: var(--accent); font-weight: bold; text-decoration: underline dotted; cursor: pointer; }
/* The interval lines under a linked rate keep their own look (decorations stop at inline blocks). */
a.count sub { display: inline-block; font-weight: normal; color: var(--muted); }
figure.vega { margin: 14px 0 22px; }
figure.vega .chart { overflow-x: auto; }
figcaption { font-size: 13px; color: var(--muted); max-width: 980px; }
#tooltip { position: fixed; z-index: 20; pointer-events: none; background: #fff; border: 1px solid #888; border-radius: 4px; padding: 6px 8px; font-size: 12px; box-shadow: 0 2px 8px rgba(0,0,0,.2); max-width: 420px; overflow-wrap: anywhere; }
.tip-key { color: var(--muted); }
#browser { position: fixed; z-index: 10; top: 0; right: 0; bottom: 0; width: min(760px, 62vw); overflow-y: auto; background: #fff; border-left: 2px solid #14324f; box-shadow: -6px 0 18px rgba(0,0,0,.18); padding: 0 18px 40px; }
#browser .panel-head { position: sticky; top: 0; background: #fff; display: flex; justify-content: space-between; align-items: center; gap: 12px; border-bottom: 1px solid var(--line); }
#browser h2 { border: 0; margin: 12px 0; font-size: 18px; overflow-wrap: anywhere; }
#browser-close { font-size: 14px; padding: 4px 10px; cursor: pointer; white-space: nowrap; }
table.episode-list { width: 100%; }
table.episode-list td { overflow-wrap: break-word; }
table.episode-list tbody tr { cursor: pointer; }
table.episode-list tbody tr:hover, table.episode-list tbody tr.selected { background: #e6f0fb; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; font: 12.5px/1.45 "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre.sql { background: var(--soft); padding: 6px 8px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; font-size: 13px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
ol.messages { list-style: none; padding: 0; }
li.message { border: 1px solid var(--line); border-left-width: 4px; border-radius: 4px; padding: 6px 10px; margin: 8px 0; max-width: none; }
li.role-system { border-left-color: #888; } li.role-user { border-left-color: #0072B2; } li.role-assistant { border-left-color: #009E73; } li.role-tool { border-left-color: #E69F00; }
.msg-head { display: flex; gap: 10px; font-size: 12px; color: var(--muted); }
.msg-head .role { font-weight: bold; color: var(--fg); }
.msg-head .fail, .msg-head .discarded { color: #b00020; }
.label { font-size: 12px; color: var(--muted); margin-top: 4px; }
.muted { color: var(--muted); }
.no-transcript, .omitted { background: #fff6e0; border: 1px solid #f0d48a; padding: 6px 10px; }
.error { color: #b00020; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0 2px; }
.filters input[type=search] { flex: 1 1 240px; padding: 3px 6px; font: inherit; font-size: 13px; }
.filters select { max-width: 240px; font-size: 13px; }
.filter-count { font-size: 12px; color: var(--muted); margin: 2px 0 6px; }
`;
