/** A tenant of a bench stack: an organization with an owner key, a read key and a dataset. */
import { post, type BenchStack } from './spawn-stack.js';
import { syntheticCorpus } from './synthetic.js';

/** What a bench needs of one tenant. */
export interface BenchTenant {
  readonly orgId: string;
  /** Owner key (role 2). */
  readonly ownerKey: string;
  /** Read-only key (role 0). */
  readonly readKey: string;
  readonly datasetId: string;
}

/** Creates an organization named `name` with an owner key, a read key and one dataset. */
export async function benchTenant(stack: BenchStack, name: string): Promise<BenchTenant> {
  const admin = { authorization: stack.adminKey };
  const orgId = (await post(stack.baseUrl, '/api/organization', { name }, admin)).id as string;
  const inOrg = { ...admin, 'tr-organization': orgId };
  const ownerKey = (await post(stack.baseUrl, '/api/organization/api_key', { name: 'owner', role: 2 }, inOrg)).api_key as string;
  const readKey = (await post(stack.baseUrl, '/api/organization/api_key', { name: 'read', role: 0 }, inOrg)).api_key as string;
  const datasetId = (await post(stack.baseUrl, '/api/dataset', { dataset_name: `${name}-ds` }, { authorization: ownerKey, 'tr-organization': orgId })).id as string;
  return { orgId, ownerKey, readKey, datasetId };
}

/**
 * The two tenants of the isolation benches: a victim with 2,000 synthetic chunks and an attacker
 * with 400 of the same, each in its own organization.
 */
export async function attackerAndVictim(stack: BenchStack): Promise<{ attacker: BenchTenant; victim: BenchTenant }> {
  const attacker = await benchTenant(stack, 'attacker');
  const victim = await benchTenant(stack, 'victim');
  const docs = [...syntheticCorpus({ docs: 2000, seed: 11 })];
  for (let i = 0; i < docs.length; i += 100) {
    const batch = docs.slice(i, i + 100).map((d) => ({ chunk_html: d.text, tag_set: d.tags }));
    await post(stack.baseUrl, '/api/chunk', batch, { authorization: victim.ownerKey, 'tr-dataset': victim.datasetId });
    await post(stack.baseUrl, '/api/chunk', batch.slice(0, 20), { authorization: attacker.ownerKey, 'tr-dataset': attacker.datasetId });
  }
  return { attacker, victim };
}
