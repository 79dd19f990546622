/** SciFact into a running bench stack over the HTTP API, as a user would load it. */
import type { SciFactDoc } from './scifact.js';
import { post } from './spawn-stack.js';

/** What {@link ingestSciFact} made: the dataset's headers (admin key + TR-Dataset), its id, and the ingest time. */
export interface IngestedSciFact {
  readonly headers: Record<string, string>;
  readonly datasetId: string;
  readonly ingestMs: number;
}

/** Creates an organization and a dataset, then posts `docs` (title + text) in batches of 120. */
export async function ingestSciFact(baseUrl: string, adminKey: string, docs: readonly SciFactDoc[]): Promise<IngestedSciFact> {
  const admin = { authorization: adminKey };
  const org = await post(baseUrl, '/api/organization', { name: 'bench' }, admin);
  const ds = await post(baseUrl, '/api/dataset', { dataset_name: 'scifact' }, { ...admin, 'tr-organization': org.id });
  const headers = { ...admin, 'tr-dataset': ds.id as string };
  const t0 = Date.now();
  for (let i = 0; i < docs.length; i += 120) {
    const batch = docs.slice(i, i + 120).map((d) => ({ tracking_id: d.id, chunk_html: `${d.title} ${d.text}` }));
    await post(baseUrl, '/api/chunk', batch, headers);
  }
  return { headers, datasetId: ds.id as string, ingestMs: Date.now() - t0 };
}
