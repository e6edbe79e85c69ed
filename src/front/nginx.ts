import type { Instance } from './instances.js';

// The nginx config of the front door. One template, readable as the file it writes; only the lists of
// instances (the tag → upstream map and the upstream blocks), the listen line and the header comment are
// generated. Every generated value was checked in instances.ts, and no key is in it: requests are routed
// on the public tag of their key, `olpk_<tag>_<43 base64url>`, never on a list of tokens.

export interface NginxOptions {
  instances: readonly Instance[];
  /** `host:port`. */
  listen: string;
  /** Absolute paths; both or neither. */
  tls?: { cert: string; key: string } | undefined;
  /** The tag of the instance that takes legacy untagged keys (`olpk_<43>`); without it they get a 401. */
  untagged?: string | undefined;
  serverName?: string | undefined;
  /** Who wrote it (`olp 1.2.3`), for the header. */
  generator: string;
}

// Messages of the door's own answers: constants, so nothing a client sent reaches a JSON body.
const UNKNOWN =
  'not an olp key with a known instance tag (olpk_<tag>_...): check the key, or ask its owner for a new one';
const LEGACY =
  'an olp key without an instance tag (olpk_ and 43 characters) cannot be routed here: ' +
  'rotate it on its instance (olp keys rotate NAME) and use the new key';
const DOWN = 'the olp instance of this key is unavailable (the front door could not reach it); retry shortly';

const LOG_FORMAT =
  'log_format olp \'$remote_addr [$time_local] "$request" $status rid=$olp_rid ' +
  "olp_rid=$upstream_http_x_request_id tag=$olp_tag up=$upstream_addr rt=$request_time';";
const DOWN_ANTHROPIC =
  '      if ($olp_anthropic) { return 503 ' +
  `'{"type":"error","error":{"type":"api_error","message":"${DOWN}"}}\\n'; }`;
const DOWN_OPENAI =
  '      return 503 ' +
  `'{"error":{"message":"${DOWN}","type":"server_error","param":null,"code":"instance_unavailable"}}\\n';`;
const NO_KEY_ANTHROPIC =
  '      if ($olp_anthropic) { return 401 ' +
  `'{"type":"error","error":{"type":"authentication_error","message":"$olp_reject"}}\\n'; }`;
const NO_KEY_OPENAI =
  '      return 401 ' +
  `'{"error":{"message":"$olp_reject","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}\\n';`;

/** The whole nginx.conf for these instances. */
export function toNginxConfig(o: NginxOptions): string {
  const home = o.untagged ?? o.instances[0]!.tag;
  return `${header(o, home)}\n${HTTP_HEAD}${routing(o, home)}${server(o)}`;
}

/** nginx's own settings, the log format, and the tag of the key each request carries. */
const HTTP_HEAD = `worker_processes 1;
pid nginx.pid;
error_log error.log warn;
events { worker_connections 1024; }

http {
  # Every path relative to the prefix (-p DIR/), so nginx runs as any user.
  client_body_temp_path t_body;
  proxy_temp_path t_proxy;
  fastcgi_temp_path t_fcgi;
  uwsgi_temp_path t_uwsgi;
  scgi_temp_path t_scgi;
  server_tokens off;

  # The client's request id when it sends one, else nginx's own; olp's is logged beside it.
  map $http_x_request_id $olp_rid { "" $request_id; default $http_x_request_id; }
  ${LOG_FORMAT}
  access_log access.log olp;

  # The instance tag of the key: x-api-key first (as olp reads it), then Authorization: Bearer.
  # Tagged keys are olpk_<tag>_<43>, untagged (legacy) ones olpk_<43>: the length tells them apart.
  map $http_authorization $olp_bearer_tag {
    "~^(?i:bearer)\\s+olpk_(?<bt>[a-z0-9]{1,16})_[A-Za-z0-9_-]{43}\\s*$" $bt;
    "~^(?i:bearer)\\s+olpk_[A-Za-z0-9_-]{43}\\s*$" -untagged;
    "" -none;
    default -unknown;
  }
  map $http_x_api_key $olp_tag {
    "~^\\s*olpk_(?<xt>[a-z0-9]{1,16})_[A-Za-z0-9_-]{43}\\s*$" $xt;
    "~^\\s*olpk_[A-Za-z0-9_-]{43}\\s*$" -untagged;
    "" $olp_bearer_tag;
    default -unknown;
  }
`;

/** The tag → upstream map, the reject messages, and one upstream block per instance. */
function routing(o: NginxOptions, home: string): string {
  const upstreams = o.instances.map(
    (i) =>
      `  upstream olp_${i.tag} {\n    server ${i.address} max_fails=0;\n` +
      '    keepalive 16;\n    keepalive_timeout 60s;\n  }',
  );
  const routes = o.instances.map((i) => `    ${i.tag} olp_${i.tag};`);
  const untaggedRoute = o.untagged
    ? `    -untagged olp_${o.untagged};`
    : '    # -untagged: no --untagged instance, so legacy keys get a 401';
  return `  map $olp_tag $olp_upstream {
${routes.join('\n')}
    -none olp_${home};  # no key: the usage page, GET /, /health
${untaggedRoute}
    default "";
  }
  map $olp_tag $olp_reject {
    -untagged "${LEGACY}";
    default "${UNKNOWN}";
  }
  map $uri $olp_anthropic { ~^/v1/messages 1; default 0; }

${upstreams.join('\n')}

`;
}

/** The server block: the listen line (with TLS), the proxying, and the door's own 503 and 401 answers. */
function server(o: NginxOptions): string {
  const listen = o.tls
    ? `    listen ${o.listen} ssl;\n    ssl_certificate "${o.tls.cert}";\n` +
      `    ssl_certificate_key "${o.tls.key}";\n    ssl_protocols TLSv1.2 TLSv1.3;`
    : `    listen ${o.listen};`;
  return `  server {
${listen}
${o.serverName ? `    server_name ${o.serverName};\n` : ''}    client_max_body_size 64m;
    default_type application/json;

    location / {
      if ($olp_upstream = "") { return 401; }
      proxy_pass http://$olp_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Request-Id $olp_rid;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # Streams pass through as they come (SSE), and bodies go on as they arrive.
      proxy_buffering off;
      proxy_cache off;
      proxy_request_buffering off;
      # A non-streamed reply is silent for the whole CLI run: longer than olp's --timeout.
      proxy_connect_timeout 5s;
      proxy_read_timeout 3600s;
      proxy_send_timeout 3600s;
      # Each instance is the only one holding its keys' state: never resend elsewhere.
      proxy_next_upstream off;
      error_page 502 503 504 = @down;
      error_page 401 = @nokey;
    }

    location @down {
      add_header Retry-After 5 always;
      add_header X-Should-Retry true always;
      add_header X-Request-Id $olp_rid always;
${DOWN_ANTHROPIC}
${DOWN_OPENAI}
    }

    location @nokey {
      add_header X-Request-Id $olp_rid always;
      add_header X-Should-Retry false always;
${NO_KEY_ANTHROPIC}
${NO_KEY_OPENAI}
    }
  }
}
`;
}

function header(o: NginxOptions, home: string): string {
  const scheme = o.tls ? 'https' : 'http';
  const untagged = o.untagged ? `to ${o.untagged}` : '401, rotate them on their instance';
  return [
    `# The olp front door: nginx config generated by \`olp front nginx\` (${o.generator}). It holds no key.`,
    `# Listens on ${scheme}://${o.listen}; instances (tag -> olp):`,
    ...o.instances.map(
      (i) => `#   ${i.tag.padEnd(16)} ${i.origin}${i.tag === home ? '  (also requests without a key)' : ''}`,
    ),
    `# A request goes to the instance whose tag is in its key (olpk_<tag>_...): x-api-key first, then`,
    `# Authorization: Bearer. Untagged keys (olpk_ and 43 characters): ${untagged}.`,
    `# Run it as any user, every file in DIR:`,
    `#   olp front nginx ... > DIR/nginx.conf`,
    `#   nginx -t -p DIR/ -c nginx.conf        # check`,
    `#   nginx -p DIR/ -c nginx.conf           # start (add -g 'daemon off;' to stay in the foreground)`,
    `#   nginx -p DIR/ -c nginx.conf -s quit   # stop once streams end (-s reload after regenerating)`,
  ].join('\n');
}
