/**
 * The audit event types that an in-service handler reads (architecture.md §4: the notifications).
 * Every other event is written already marked handled, so the handlers' queue holds only what they
 * act on; an event of a type missing here would still be handled (marked) when a handler meets it.
 */
export const HANDLED_EVENT_TYPES: ReadonlySet<string> = new Set([
  'account.locked',
  'account.blocked',
  'device.added',
  'passkey.registered',
  'passkey.removed',
  'mfa.factor_added',
  'mfa.factor_removed',
  'password.changed',
  'password.reset',
  'user.created',
  'webhook.disabled',
]);

/** The handled_at value an event is written with: null while a handler still has to see it. */
export function handledAtFor(type: string, at: number): number | null {
  return HANDLED_EVENT_TYPES.has(type) ? null : at;
}
