// The usage page's HTML (GET /olp/): the key form, a member's own bill, and the owner's family,
// CLIs and key management (hidden until an owner's key is given). No inline script or style.

/** A table with its header row and an empty body that the script fills. */
function table(open: string, heads: string[], bodyId: string): string {
  const ths = heads.map((h) => `<th>${h}</th>`).join('');
  return `${open}<thead><tr>${ths}</tr></thead><tbody id="${bodyId}"></tbody></table>`;
}

/** Today's or this month's card: tokens, requests, the budget bar and the empty note. */
function billCard(part: string, title: string, empty: string): string {
  return (
    `<div class="card"><h2>${title}</h2>` +
    `<p><span id="${part}-tokens" class="big">0</span> tokens</p>` +
    `<p><span id="${part}-requests">0</span> requests</p>` +
    `<div class="bar"><div id="${part}-bar"></div></div>` +
    `<p class="muted" id="${part}-budget"></p>` +
    `<p class="empty" id="${part}-empty" hidden>${empty}</p></div>`
  );
}

/** Where the script shows what olp said about one field of the form. */
const fieldError = (param: string): string => `<span class="field-error" data-param="${param}"></span>`;

/** A labelled input of the new-key form, with its error spot. */
const input = (label: string, name: string, attrs: string): string =>
  `<label>${label} <input name="${name}" ${attrs}></label>${fieldError(name)}`;

const HEADER =
  '<header><div><h1 id="hello">olp usage</h1><p class="muted" id="served-by"></p></div>' +
  '<button id="forget" class="quiet" hidden>Forget key</button></header>';

const KEY_LABEL =
  '<label for="key">Your olp key ' +
  '<span class="muted">(several instances: each one\'s owner key, separated by spaces)</span></label>';

const CHART_TABLE = table(
  '<table id="chart-table"><caption>Tokens and requests per day</caption>',
  ['day', 'tokens', 'requests'],
  'chart-rows',
);
const MODELS_TABLE = table('<table id="models-table">', ['model', 'requests', 'tokens in', 'tokens out'], 'models');
const CONVERSATIONS_TABLE = table('<table id="conv-table">', ['started', 'last message', 'turns'], 'conversations');
const MEMBERS_TABLE = table(
  '<table id="members-table" class="stack">',
  ['name', 'instance', 'role', 'login', 'today', 'daily budget', 'this month', 'monthly budget'],
  'members',
);

const TOKEN_ROW =
  '<div class="row"><input id="token-value" readonly aria-label="new key">' +
  '<button id="copy" type="button">Copy</button>' +
  '<button id="token-done" type="button" class="quiet">Done</button></div>';

/** "Your login": what serves the key, and the forms a member connects their own login with. */
const MY_LOGIN_SECTION = `<section id="my-login" hidden><h2>Your login</h2>
    <p id="ml-banner" class="card notice" role="status" hidden></p>
    <p id="ml-status"></p>
    <ul id="ml-clis" class="plain"></ul>
    <p id="ml-keys" class="muted"></p>
    <p id="ml-locked" class="muted" hidden></p>
    <p id="ml-said" class="ok" role="status"></p><p id="ml-error" class="field-error" role="alert"></p>
    <div id="ml-forms" class="cards">
      <form id="ml-claude" class="card" novalidate>
        <h3>Connect Claude</h3>
        <div class="row" role="radiogroup" aria-label="kind">
          <label class="check"><input type="radio" name="kind" value="token" checked> Claude subscription</label>
          <label class="check"><input type="radio" name="kind" value="apiKey"> Anthropic API key</label>
        </div>
        <p class="hint" id="ml-claude-how">On your own computer, run <code>claude setup-token</code>, sign in with your
          Claude account, and paste the token it prints (it starts <code>sk-ant-oat</code>).</p>
        <label>Token or key <input name="secret" type="password" autocomplete="off" placeholder="sk-ant-oat…"></label>
        <span class="field-error" data-param="token"></span>
        <label class="check"><input name="check" type="checkbox"> Also send one tiny request to check it (a few
          tokens of your plan)</label>
        <p class="field-error" data-param=""></p>
        <button type="submit">Connect Claude</button>
      </form>
      <div id="ml-codex" class="card">
        <h3>Connect ChatGPT (codex)</h3>
        <p class="hint">Sign in with your ChatGPT account on your phone or laptop: olp shows a code to enter there.</p>
        <button type="button" id="ml-device-start">Connect ChatGPT</button>
        <p class="field-error" id="ml-device-error" role="alert"></p>
        <div id="ml-device" hidden>
          <div id="ml-device-steps"><p>Open <a id="ml-device-url" target="_blank" rel="noopener noreferrer"></a> and
            enter the code</p><p class="big code" id="ml-device-code"></p><p class="muted" id="ml-device-expires"></p></div>
          <p id="ml-device-state" role="status"></p>
          <button type="button" id="ml-device-cancel" class="quiet">Cancel</button>
        </div>
        <details><summary>Use an OpenAI API key instead</summary>
          <form id="ml-codex-key" novalidate>
            <label>OpenAI API key <input name="apiKey" type="password" autocomplete="off" placeholder="sk-…"></label>
            <span class="field-error" data-param="apiKey"></span><p class="field-error" data-param=""></p>
            <button type="submit">Save API key</button>
          </form>
        </details>
      </div>
    </div>
  </section>`;

const ROLE_SELECT =
  '<select name="role"><option value="member">member</option><option value="owner">owner</option></select>';

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
${HEADER}
<p id="login-refused" class="card notice refused" role="alert" hidden></p>
<form id="login">
  ${KEY_LABEL}
  <input id="key" type="password" autocomplete="off" placeholder="olpk_…" required>
  <button type="submit">Show my usage</button>
  <p class="hint">The key stays in this tab only (never in the address or a cookie).</p>
</form>
<p id="error" role="alert" hidden></p>
<main id="bill" hidden>
  <section class="cards">
    ${billCard('today', 'Today', 'Nothing yet today')}
    ${billCard('month', 'This month', 'Nothing yet this month')}
  </section>
  <section><h2>Last 30 days</h2>
    <div id="chart-box"><svg id="chart" role="img" aria-label="tokens per day, last 30 days"></svg></div>
    <p class="empty" id="chart-empty" hidden>Nothing in the last 30 days</p>
    <div class="sr-only">${CHART_TABLE}</div>
  </section>
  <section><h2>By model</h2>
    ${MODELS_TABLE}
    <p class="empty" id="models-empty" hidden>No answered requests yet</p>
    <div id="failures" hidden><p id="failures-count"></p><ul id="failure-codes"></ul></div>
  </section>
  <section><h2>Recent conversations</h2>
    ${CONVERSATIONS_TABLE}
    <p class="empty" id="conv-empty" hidden>No conversations yet</p>
  </section>
  <section><h2>Claude plan</h2><ul id="plan" class="plain"></ul></section>
  ${MY_LOGIN_SECTION}
  <section id="family" hidden>
    <h2>Family</h2>
    ${MEMBERS_TABLE}
    <h2>CLIs and load</h2><ul id="health" class="plain"></ul>
    <h2>Plan windows</h2><ul id="plans" class="plain"></ul>
  </section>
  <section id="keys" hidden>
    <h2>Keys <span class="muted" id="keys-where"></span></h2>
    <div id="token-box" class="card notice" hidden role="status">
      <p><strong id="token-for"></strong>: the new key is shown only now. Copy it and give it to its person.</p>
      ${TOKEN_ROW}
    </div>
    <p class="field-error" id="keys-error" role="alert"></p>
    <ul id="keylist" class="plain"></ul>
    <form id="create" class="card" novalidate>
      <h3>Add a person</h3>
      ${input('Name', 'name', 'required maxlength="64" autocomplete="off"')}
      <label>Role ${ROLE_SELECT}</label>${fieldError('role')}
      ${input('Login', 'login', 'placeholder="this machine\'s" autocomplete="off"')}
      ${input('Tokens a day', 'dailyTokens', 'inputmode="numeric" placeholder="no limit"')}
      ${input('Tokens a month', 'monthlyTokens', 'inputmode="numeric" placeholder="no limit"')}
      <p class="field-error" data-param=""></p>
      <button type="submit">Create key</button>
    </form>
    <div id="changes-box" hidden><h2>Recent changes</h2><ul id="changes" class="plain"></ul></div>
  </section>
</main>
</body>
</html>
`;
