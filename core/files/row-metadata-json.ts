/**
 * The JSON text of an imported row's chunk metadata, `{ ...fileMetadata, ...row }`, spliced from
 * the row's JSON text (which the import makes anyway: it is the chunk's `chunk_html`) and the file
 * metadata's (made once per file), so that the store does not serialise every row a second time.
 *
 * The splice is exactly `JSON.stringify` of the merged object when the row has none of the file's
 * keys (a row value replacing a file value keeps the file key's place) and, under a non-empty file
 * metadata, no key starting with a digit (array-index keys such as "7" come first in an object's
 * order wherever they were set). Any other row is serialised whole.
 */

/** The file metadata last serialised: one file's rows share one metadata object. */
let lastFile: { readonly metadata: object; readonly json: string; readonly keys: readonly string[] } | null = null;

/** The file metadata's JSON text and keys, cached for the next row of the same file. */
function fileJson(fileMetadata: object): { readonly json: string; readonly keys: readonly string[] } {
  if (lastFile?.metadata !== fileMetadata) lastFile = { metadata: fileMetadata, json: JSON.stringify(fileMetadata), keys: Object.keys(fileMetadata) };
  return lastFile;
}

/** Whether the row has a key the file metadata has, or (`digits`) a key starting with a digit. */
function clashes(row: Record<string, unknown>, fileKeys: readonly string[], digits: boolean): boolean {
  for (let i = 0; i < fileKeys.length; i++) if (Object.hasOwn(row, fileKeys[i]!)) return true;
  if (!digits) return false;
  for (const key in row) {
    const c = key.charCodeAt(0);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

/**
 * `JSON.stringify(metadata)` for `metadata` = `{ ...fileMetadata, ...row }` (or `row` itself when
 * `fileMetadata` is null), given `rowJson` = `JSON.stringify(row)`.
 */
export function metadataJsonOf(metadata: Record<string, unknown>, row: Record<string, unknown>, rowJson: string, fileMetadata: object | null): string {
  if (fileMetadata === null) return rowJson;
  const file = fileJson(fileMetadata);
  if (file.keys.length === 0) return rowJson;
  if (clashes(row, file.keys, true)) return JSON.stringify(metadata);
  if (rowJson === '{}') return file.json;
  return `${file.json.slice(0, -1)},${rowJson.slice(1)}`;
}
