export {
  LOGSTORE_PLACEHOLDER,
  REGISTRY,
  VAR_NAMES,
  isVarName,
  varDef,
  type Registry,
  type VarName,
} from './registry.js';
export { findConflicts, type Conflict, type ValueReader } from './consistency.js';
export { ConfigError, parseValue, formatValue, describeExpected, type ConfigIssue } from './parse.js';
export {
  ConfigService,
  parseEnvironment,
  overlayUiValues,
  type ConfigSnapshot,
  type EnvSource,
  type UiValueLoader,
} from './resolve.js';
export type { VarDef, VarGroup, VarType, ValueSource } from './types.js';
