// The front door: the config of a standard reverse proxy in front of share-nothing olp instances,
// and the Prometheus jobs that scrape them.
export { askHealth, parseOwnerKeys, resolveInstances } from './discover.js';
export {
  checkDistinct,
  FrontError,
  parseInstanceSpec,
  parseListen,
  parsePath,
  parseServerName,
  parseTag,
  type Instance,
  type InstanceSpec,
} from './instances.js';
export { toNginxConfig, type NginxOptions } from './nginx.js';
export { toPrometheusConfig, type PrometheusOptions } from './prometheus.js';
