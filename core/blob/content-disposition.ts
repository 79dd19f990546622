/**
 * The Content-Disposition a download is served with, naming the file (RFC 6266): a plain ASCII
 * `filename` for old clients and the exact name as UTF-8 in `filename*`. Control characters are
 * dropped: a CR or LF in a header would be refused by Node (or split the header elsewhere).
 */

/** Characters `filename*` may carry as they are (RFC 5987 attr-char). */
const ATTR_CHAR = /^[A-Za-z0-9!#$&+.^_`|~-]$/;

const isControl = (c: number): boolean => c < 32 || c === 127;

/** `attachment; filename="..."; filename*=UTF-8''...` for `fileName`. */
export function contentDisposition(fileName: string): string {
  let clean = '';
  for (const ch of fileName) if (!isControl(ch.codePointAt(0)!)) clean += ch;
  if (clean === '') clean = 'file';
  let ascii = '';
  for (const ch of clean) {
    const c = ch.codePointAt(0)!;
    ascii += c > 126 || ch === '"' || ch === '\\' ? '_' : ch;
  }
  let encoded = '';
  for (const byte of Buffer.from(clean, 'utf8')) {
    const ch = String.fromCharCode(byte);
    encoded += byte < 128 && ATTR_CHAR.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Whether `type` is a plain media type (`type/subtype`, optional `; param=value` parts) that may go
 * into a Content-Type header as it is: printable ASCII, no quotes or backslashes.
 */
export function isHeaderSafeMediaType(type: string): boolean {
  if (type.length === 0 || type.length > 200) return false;
  let slash = false;
  for (let i = 0; i < type.length; i++) {
    const c = type.charCodeAt(i);
    if (c < 32 || c > 126 || c === 34 || c === 92) return false;
    if (c === 47) slash = true;
  }
  return slash;
}
