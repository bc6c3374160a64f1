/** Value types of configuration variables, as the specification names them. */
export type VarType = 'string' | 'integer' | 'boolean' | 'list' | 'enumeration' | 'number';

/** Groups of the specification; the first four are editable in the UI. */
export type VarGroup =
  | 'API'
  | 'Security'
  | 'Mail'
  | 'Error tracking'
  | 'Database connection'
  | 'General parameters'
  | 'Internal service addresses'
  | 'Sessions and background processing'
  | 'Search and log store integration'
  | 'Error-tracking integration'
  | 'Deployment';

export const UI_GROUPS: readonly VarGroup[] = ['API', 'Security', 'Mail', 'Error tracking'];

/** Where an effective value came from. */
export type ValueSource = 'ui' | 'env' | 'default';

interface VarBase<T> {
  /** Environment variable that sets it. */
  readonly env: string;
  readonly group: VarGroup;
  /** Human description (from the specification). */
  readonly description: string;
  /** Parsed default value. */
  readonly default: T;
  /** Editable through the settings API (groups API, Security, Mail, Error tracking). */
  readonly ui: boolean;
  /** Never returned, logged or echoed in an error message. */
  readonly secret: boolean;
  /** Takes effect only after a restart even when UI-editable. */
  readonly restart: boolean;
}

export interface StringVar extends VarBase<string> {
  readonly type: 'string';
  /** Allowed values (case-insensitive); the parsed value is upper-cased. */
  readonly oneOf?: readonly string[];
  /** Extra validation; returns an explanation of what is expected, or null when fine. */
  readonly check?: (value: string) => string | null;
  /** Short text describing the expected format, for errors and docs. */
  readonly format?: string;
}
export interface IntegerVar extends VarBase<number> {
  readonly type: 'integer';
  readonly min: number;
  readonly max: number;
}
export interface NumberVar extends VarBase<number> {
  readonly type: 'number';
  readonly min: number;
  readonly max: number;
}
export interface BooleanVar extends VarBase<boolean> {
  readonly type: 'boolean';
}
export interface ListVar extends VarBase<readonly string[]> {
  readonly type: 'list';
  /** Validation of one item; returns what is expected, or null. */
  readonly checkItem?: (item: string) => string | null;
  readonly format?: string;
}
export interface EnumVar extends VarBase<string> {
  readonly type: 'enumeration';
  readonly values: readonly string[];
}

export type VarDef = StringVar | IntegerVar | NumberVar | BooleanVar | ListVar | EnumVar;

/** The parsed value type of a definition. */
export type ValueOf<D> = D extends VarBase<infer T> ? T : never;
