// Changing keys: the rules both doors share (`olp keys`, `/olp/keys`), the JSON bodies, and the
// changes themselves, each recorded as an admin action.
export {
  KeyRuleError,
  LIMIT_FLAGS,
  OVERAGES,
  ROLES,
  checkNewName,
  defaultRole,
  isLimit,
  toExpiryTime,
  toLoginName,
  toModels,
} from './rules.js';
export { parseKeyCreate, parseKeyUpdate, type KeyChangeRequest } from './request.js';
export { runCreateKey, runRevokeKey, runRotateKey, runUpdateKey, type KeyChange } from './actions.js';
