/**
 * The protected services an account's API tokens may be limited to (docs/api.md, "API token audiences"):
 * those it may enter by their access rules. Handed by app.ts to the token routes of users/, a lower tier.
 */
import { groupNamesOf, type UserRow } from '../accounts/model.js';
import type { RequestScope } from '../http/scope.js';
import { mayEnter } from './decision.js';
import { listServices } from './services.js';

/**
 * The names of the protected services `owner` may enter by their access rules: what its tokens may be
 * limited to (another name is refused like one no service has, so nobody learns of services beyond).
 */
export async function audienceChoices(scope: RequestScope, owner: UserRow): Promise<string[]> {
  const account = { ...owner, groups: groupNamesOf(owner) };
  return (await listServices(scope.db, scope.config, scope.now()))
    .filter((s) => mayEnter(s.access, account))
    .map((s) => s.name);
}
