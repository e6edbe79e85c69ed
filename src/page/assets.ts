// The usage page (GET /olp/): one HTML file, its stylesheet and its script, served by olp itself
// (no CDN, no external fonts: it works offline on a LAN). The key is pasted once, kept in the
// tab's sessionStorage and sent as a bearer token; the page draws what /olp/me/usage (and, for an
// owner, /olp/usage, /health and /olp/keys) return. Data only ever reaches the page as text.
// An owner of several instances behind one front door pastes each instance's owner key: the door
// routes each key's calls to its instance, and the family table rolls them up.
import { KEYS_JS } from './keys.js';
import { MEMBER_JS } from './member.js';
import { MY_LOGIN_JS } from './my-login.js';
import { OWNER_JS } from './owner.js';

export { PAGE_HTML } from './html.js';
export { PAGE_CSS } from './css.js';

/** The page's script: the member's view, the owner's additions, the member's own login, key management and start-up. */
export const PAGE_JS = MEMBER_JS + OWNER_JS + MY_LOGIN_JS + KEYS_JS;
