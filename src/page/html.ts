// The usage page's HTML (GET /olp/): the key form, a member's own bill, and the owner's family,
// CLIs and key management (hidden until an owner's key is given). No inline script or style.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>olp usage</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/olp/app.css">
<script src="/olp/app.js" defer></script>
</head>
<body>
<header><div><h1 id="hello">olp usage</h1><p class="muted" id="served-by"></p></div><button id="forget" class="quiet" hidden>Forget key</button></header>
<p id="login-refused" class="card notice refused" role="alert" hidden></p>
<form id="login">
  <label for="key">Your olp key <span class="muted">(several instances: each one's owner key, separated by spaces)</span></label>
  <input id="key" type="password" autocomplete="off" placeholder="olpk_…" required>
  <button type="submit">Show my usage</button>
  <p class="hint">The key stays in this tab only (never in the address or a cookie).</p>
</form>
<p id="error" role="alert" hidden></p>
<main id="bill" hidden>
  <section class="cards">
    <div class="card"><h2>Today</h2><p><span id="today-tokens" class="big">0</span> tokens</p><p><span id="today-requests">0</span> requests</p><div class="bar"><div id="today-bar"></div></div><p class="muted" id="today-budget"></p><p class="empty" id="today-empty" hidden>Nothing yet today</p></div>
    <div class="card"><h2>This month</h2><p><span id="month-tokens" class="big">0</span> tokens</p><p><span id="month-requests">0</span> requests</p><div class="bar"><div id="month-bar"></div></div><p class="muted" id="month-budget"></p><p class="empty" id="month-empty" hidden>Nothing yet this month</p></div>
  </section>
  <section><h2>Last 30 days</h2>
    <div id="chart-box"><svg id="chart" role="img" aria-label="tokens per day, last 30 days"></svg></div>
    <p class="empty" id="chart-empty" hidden>Nothing in the last 30 days</p>
    <div class="sr-only"><table id="chart-table"><caption>Tokens and requests per day</caption><thead><tr><th>day</th><th>tokens</th><th>requests</th></tr></thead><tbody id="chart-rows"></tbody></table></div>
  </section>
  <section><h2>By model</h2>
    <table id="models-table"><thead><tr><th>model</th><th>requests</th><th>tokens in</th><th>tokens out</th></tr></thead><tbody id="models"></tbody></table>
    <p class="empty" id="models-empty" hidden>No answered requests yet</p>
    <div id="failures" hidden><p id="failures-count"></p><ul id="failure-codes"></ul></div>
  </section>
  <section><h2>Recent conversations</h2>
    <table id="conv-table"><thead><tr><th>started</th><th>last message</th><th>turns</th></tr></thead><tbody id="conversations"></tbody></table>
    <p class="empty" id="conv-empty" hidden>No conversations yet</p>
  </section>
  <section><h2>Claude plan</h2><ul id="plan" class="plain"></ul></section>
  <section id="family" hidden>
    <h2>Family</h2>
    <table id="members-table" class="stack"><thead><tr><th>name</th><th>instance</th><th>role</th><th>login</th><th>today</th><th>daily budget</th><th>this month</th><th>monthly budget</th></tr></thead><tbody id="members"></tbody></table>
    <h2>CLIs and load</h2><ul id="health" class="plain"></ul>
    <h2>Plan windows</h2><ul id="plans" class="plain"></ul>
  </section>
  <section id="keys" hidden>
    <h2>Keys <span class="muted" id="keys-where"></span></h2>
    <div id="token-box" class="card notice" hidden role="status">
      <p><strong id="token-for"></strong>: the new key is shown only now. Copy it and give it to its person.</p>
      <div class="row"><input id="token-value" readonly aria-label="new key"><button id="copy" type="button">Copy</button><button id="token-done" type="button" class="quiet">Done</button></div>
    </div>
    <p class="field-error" id="keys-error" role="alert"></p>
    <ul id="keylist" class="plain"></ul>
    <form id="create" class="card" novalidate>
      <h3>Add a person</h3>
      <label>Name <input name="name" required maxlength="64" autocomplete="off"></label><span class="field-error" data-param="name"></span>
      <label>Role <select name="role"><option value="member">member</option><option value="owner">owner</option></select></label><span class="field-error" data-param="role"></span>
      <label>Login <input name="login" placeholder="this machine's" autocomplete="off"></label><span class="field-error" data-param="login"></span>
      <label>Tokens a day <input name="dailyTokens" inputmode="numeric" placeholder="no limit"></label><span class="field-error" data-param="dailyTokens"></span>
      <label>Tokens a month <input name="monthlyTokens" inputmode="numeric" placeholder="no limit"></label><span class="field-error" data-param="monthlyTokens"></span>
      <p class="field-error" data-param=""></p>
      <button type="submit">Create key</button>
    </form>
    <div id="changes-box" hidden><h2>Recent changes</h2><ul id="changes" class="plain"></ul></div>
  </section>
</main>
</body>
</html>
`;
