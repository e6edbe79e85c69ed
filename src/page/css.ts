// The usage page's stylesheet (GET /olp/app.css): one column on a phone, no horizontal scrolling.

export const PAGE_CSS = `[hidden]{display:none!important}
*{box-sizing:border-box}
:root{font-family:system-ui,sans-serif;color:#1d2733;background:#f6f7f9}
body{max-width:60rem;margin:0 auto;padding:1rem}
header{display:flex;justify-content:space-between;align-items:flex-start;gap:.5rem}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.05rem;margin:1.4rem 0 .5rem}h3{font-size:1rem;margin:0 0 .4rem}
form{display:grid;gap:.5rem;max-width:26rem}
label{display:grid;gap:.2rem;font-size:.9rem}
input,button,select{font:inherit;padding:.5rem;border-radius:.4rem;border:1px solid #b8c0cc;min-width:0}
button{background:#2f6fde;color:#fff;border:none;cursor:pointer}
button.quiet{background:#e3e7ed;color:#1d2733}
button.danger{background:#d0342c}
button.armed{background:#8a1c1c;outline:2px solid #f3b0ab}
.hint,.muted{color:#64707d;font-size:.85rem}
.empty{color:#64707d;font-style:italic}
.big{font-size:1.5rem;font-weight:600}
#error{background:#fde8e8;color:#8a1c1c;padding:.6rem;border-radius:.4rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.8rem}
.card{background:#fff;border-radius:.6rem;padding:.8rem;box-shadow:0 1px 2px #0001}
.card p{margin:.2rem 0}.card h2{margin-top:0}
.notice{border:2px solid #2f6fde;margin-bottom:.8rem}
.notice.refused{border-color:#c0392b}
.row{display:flex;gap:.4rem;flex-wrap:wrap}.row input{flex:1 1 12rem}
.bar{height:.5rem;background:#e3e7ed;border-radius:.25rem;overflow:hidden;margin-top:.4rem;min-width:4rem}
.bar div{height:100%;width:0;background:#2f6fde}
.bar div.near{background:#e0a100}.bar div.full{background:#d0342c}
table.one-instance th:nth-child(2),table.one-instance td:nth-child(2){display:none}
tr.near td{background:#fff6dc}tr.full td{background:#fde8e8}tr.off td{color:#8a94a0}
table{width:100%;border-collapse:collapse;background:#fff;border-radius:.6rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e3e7ed;font-size:.9rem;overflow-wrap:anywhere}
#chart-box{background:#fff;border-radius:.6rem;padding:.3rem}
svg{display:block;width:100%;height:11rem}
svg rect.day{fill:#2f6fde}svg rect.day.today{fill:#1b4aa0}
svg line{stroke:#d5dbe3}svg text{fill:#64707d;font-size:11px}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;
  clip:rect(0 0 0 0);clip-path:inset(50%);white-space:nowrap}
ul.plain{list-style:none;padding:0;margin:0}ul.plain li{padding:.3rem 0}
.tag{display:inline-block;font-size:.75rem;padding:0 .4rem;border-radius:.6rem;background:#e3e7ed;margin-left:.3rem}
.tag.off{background:#fde8e8;color:#8a1c1c}.tag.near{background:#fff0c2}.tag.full{background:#fde8e8;color:#8a1c1c}
#keylist li{background:#fff;border-radius:.6rem;padding:.6rem;margin-bottom:.5rem;box-shadow:0 1px 2px #0001}
#keylist .actions{display:flex;gap:.4rem;flex-wrap:wrap;margin-top:.4rem}
#keylist form{display:flex;gap:.4rem;flex-wrap:wrap;max-width:none;margin-top:.4rem;align-items:end}
#keylist form label{flex:1 1 8rem}
.field-error{color:#8a1c1c;font-size:.85rem;margin:0}.field-error:empty{display:none}
#create{margin-top:.8rem}
label.check{display:flex;gap:.4rem;align-items:center}label.check input{width:auto;padding:0;margin:0;flex:none}
.ok{color:#1d6b36}.ok:empty{display:none}
.code{font-family:ui-monospace,monospace;letter-spacing:.15em;margin:.3rem 0}
#ml-clis li{display:flex;flex-wrap:wrap;gap:.3rem;align-items:center}#ml-clis li>li{flex-basis:100%}
#ml-forms{margin-top:.6rem}#ml-forms form{max-width:none}
details{margin-top:.6rem}summary{cursor:pointer;color:#2f6fde}
@media (max-width:40rem){
  table.stack thead{display:none}
  table.stack tr{display:block;border-bottom:2px solid #e3e7ed;padding:.3rem 0}
  table.stack td{display:flex;justify-content:space-between;gap:.6rem;border:none;padding:.15rem .5rem}
  table.stack td::before{content:attr(data-label);color:#64707d}
  table.stack td:empty{display:none}
}
`;
