export { createModelRegistry, type ModelInfo, type ModelRegistry } from './registry.js';
export type { ModelOverrides, Route } from './table.js';
