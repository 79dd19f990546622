/**
 * The text of an uploaded document (plain text, Markdown, HTML or PDF) as sections: the heading
 * path above each run of text, so that a chunk can carry its headings and never mixes two parts.
 *
 * - Plain text is one section.
 * - Markdown splits at ATX headings (`#`..`######`), never inside a fenced code block. Setext
 *   headings (`===`/`---` underlines) are not read: `---` is also a thematic break.
 * - HTML splits at the opening heading tags `POST /api/chunk/split` splits at
 *   (`headingTagSpans`), and its text is the project's one HTML→text conversion (`htmlToText`):
 *   scripts, styles and comments never become text, even when a heading tag sits inside them.
 * - PDF is one section per page that has text, read by PDFium (Chrome's PDF engine) compiled to
 *   WebAssembly: no native code, and nothing but the package's own `.wasm` file is read.
 *
 * Every scan over the untrusted bytes is linear (STYLE.md: no backtracking regexes).
 */
import type { PDFiumDocument } from '@hyzyla/pdfium';
import { badRequest } from '../domain/errors.js';
import { htmlToText } from '../domain/html-text.js';
import { headingTagSpans } from '../domain/split-html.js';
import { isRegexSpace } from '../domain/text-scan.js';

/** The document types accepted, by MIME type. */
export type DocumentType = 'text/plain' | 'text/markdown' | 'text/html' | 'application/pdf';

const TYPE_BY_EXTENSION: Readonly<Record<string, DocumentType>> = {
  txt: 'text/plain',
  text: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  html: 'text/html',
  htm: 'text/html',
  pdf: 'application/pdf',
};

/** The type of a file name by its extension (.txt .text .md .markdown .html .htm .pdf), or null when not a document we read. */
export function documentTypeOf(fileName: string): DocumentType | null {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  // A leading dot names a hidden file (`.md`), not an extension, as path.extname has it.
  if (dot <= 0) return null;
  return TYPE_BY_EXTENSION[base.slice(dot + 1).toLowerCase()] ?? null;
}

/** One section of a document: the heading path above it and its text. */
export interface DocumentSection {
  readonly headings: readonly string[];
  readonly text: string;
}

/**
 * The document's text as sections (split at headings where the format has them: Markdown
 * #..######, HTML h1..h6; PDF: one section per page). QuarryError 400 for a corrupt or encrypted
 * PDF, or bytes that are not UTF-8 text for the text types. Sections without text are left out,
 * so an empty document has none.
 */
export async function documentSections(bytes: Uint8Array, type: DocumentType): Promise<DocumentSection[]> {
  switch (type) {
    case 'text/plain': {
      const text = normalizeText(decodeUtf8(bytes, type));
      return text === '' ? [] : [{ headings: [], text }];
    }
    case 'text/markdown':
      return markdownSections(decodeUtf8(bytes, type));
    case 'text/html':
      return htmlSections(decodeUtf8(bytes, type));
    case 'application/pdf':
      return pdfSections(bytes);
  }
}

/** The bytes as UTF-8 text; a NUL character is refused too, as a sign of a binary file (and no store keeps it in text). */
function decodeUtf8(bytes: Uint8Array, type: DocumentType): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest(`The document is not valid UTF-8 text (type ${type}): send it encoded as UTF-8`);
  }
  if (text.includes('\0')) throw badRequest(`The document holds NUL characters, so it is not ${type} text`);
  return text;
}

/**
 * Line breaks made `\n`, trailing spaces of each line dropped, runs of blank lines made one
 * blank line (the paragraph break the splitter prefers), and blank lines at both ends dropped.
 * Leading spaces stay: they carry meaning in code and lists. One pass that copies runs of lines
 * needing no change as single slices, so a large text is not held as millions of line strings.
 */
function normalizeText(text: string): string {
  const src = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  const parts: string[] = [];
  /** The run of kept lines not yet copied: [runStart, runEnd), runEnd < 0 before the first. */
  let runStart = 0;
  let runEnd = -1;
  /** Whether the run's last line was kept whole, so that the next can join the run. */
  let runWhole = false;
  let blank = false;
  for (let lineStart = 0; ; ) {
    const newline = src.indexOf('\n', lineStart);
    const lineEnd = newline < 0 ? src.length : newline;
    let end = lineEnd;
    while (end > lineStart && isRegexSpace(src.charCodeAt(end - 1))) end--;
    if (end === lineStart) {
      blank = runEnd >= 0;
    } else {
      // What lies between is already "\n" or "\n\n": the line joins the run unchanged.
      if (runWhole && lineStart - runEnd <= 2) {
        runEnd = end;
      } else {
        if (runEnd >= 0) parts.push(src.slice(runStart, runEnd), blank ? '\n\n' : '\n');
        runStart = lineStart;
        runEnd = end;
      }
      blank = false;
      runWhole = end === lineEnd;
    }
    if (newline < 0) break;
    lineStart = newline + 1;
  }
  if (runEnd >= 0) parts.push(src.slice(runStart, runEnd));
  return parts.join('');
}

/**
 * Collects sections under a heading stack: a heading closes the section above it and replaces
 * the headings of its level and deeper. A heading with no text under it (nor under a deeper
 * heading) lives on as a section of its own, its text the heading's, so that no word is lost.
 */
class SectionBuilder {
  private readonly sections: DocumentSection[] = [];
  private readonly stack: { level: number; text: string; used: boolean }[] = [];
  private body: string[] = [];

  /** Adds text to the current section (pieces are joined as they are). */
  text(part: string): void {
    this.body.push(part);
  }

  /** Closes the current section and opens one under a heading of level 1..6. */
  heading(level: number, text: string): void {
    this.flush();
    while (this.stack.length > 0 && this.stack[this.stack.length - 1]!.level >= level) this.pop();
    this.stack.push({ level, text: text.replace(/\s+/g, ' ').trim(), used: false });
  }

  /** The sections, with the last one closed. */
  finish(): DocumentSection[] {
    this.flush();
    while (this.stack.length > 0) this.pop();
    return this.sections;
  }

  private pop(): void {
    const heading = this.stack.pop()!;
    if (!heading.used && heading.text !== '') this.emit(heading.text);
  }

  private emit(text: string): void {
    for (const h of this.stack) h.used = true;
    this.sections.push({ headings: this.stack.map((h) => h.text).filter((h) => h !== ''), text });
  }

  private flush(): void {
    const text = normalizeText(this.body.join(''));
    this.body = [];
    if (text !== '') this.emit(text);
  }
}

/** A Markdown code fence: its character and length. */
interface Fence {
  readonly char: string;
  readonly length: number;
}

/** Columns of indentation CommonMark allows before a heading or fence marker. */
const MAX_INDENT = 3;

/** The number of spaces a line starts with, when at most MAX_INDENT; else -1 (an indented code block). */
function indentOf(line: string): number {
  let i = 0;
  while (i < line.length && line[i] === ' ') i++;
  return i <= MAX_INDENT ? i : -1;
}

/** How many times `c` repeats from `at`. */
function runLength(line: string, at: number, c: string): number {
  let i = at;
  while (i < line.length && line[i] === c) i++;
  return i - at;
}

/** The fence a line opens (three or more backticks or tildes), or null. */
function fenceOpen(line: string): Fence | null {
  const at = indentOf(line);
  if (at < 0) return null;
  const char = line[at];
  if (char !== '`' && char !== '~') return null;
  const length = runLength(line, at, char);
  if (length < 3) return null;
  // A backtick fence's info string may not hold a backtick (CommonMark 4.5): that is inline code.
  if (char === '`' && line.includes('`', at + length)) return null;
  return { char, length };
}

/** Whether a line closes an open fence: the same character, at least as many, nothing after. */
function closesFence(line: string, fence: Fence): boolean {
  const at = indentOf(line);
  if (at < 0) return false;
  const length = runLength(line, at, fence.char);
  return length >= fence.length && line.slice(at + length).trim() === '';
}

/** An ATX heading line's level and text (closing `#`s dropped), or null. */
function atxHeading(line: string): { level: number; text: string } | null {
  const at = indentOf(line);
  if (at < 0 || line[at] !== '#') return null;
  const level = runLength(line, at, '#');
  const after = line[at + level];
  if (level > 6 || (after !== undefined && after !== ' ' && after !== '\t')) return null;
  let text = line.slice(at + level).trim();
  // A closing sequence is `#`s preceded by a space (or the whole text): `# a ##` is "a", `# a#` is "a#".
  let hashes = text.length;
  while (hashes > 0 && text[hashes - 1] === '#') hashes--;
  if (hashes === 0 || text[hashes - 1] === ' ' || text[hashes - 1] === '\t') text = text.slice(0, hashes).trim();
  return { level, text };
}

/** Markdown split at its ATX headings, fenced code kept whole; each section's text is one slice of the source. */
function markdownSections(source: string): DocumentSection[] {
  const markdown = source.includes('\r') ? source.replace(/\r\n?/g, '\n') : source;
  const builder = new SectionBuilder();
  let fence: Fence | null = null;
  let bodyStart = 0;
  for (let lineStart = 0; ; ) {
    const newline = markdown.indexOf('\n', lineStart);
    const lineEnd = newline < 0 ? markdown.length : newline;
    const line = markdown.slice(lineStart, lineEnd);
    if (fence) {
      if (closesFence(line, fence)) fence = null;
    } else {
      fence = fenceOpen(line);
      const heading = fence ? null : atxHeading(line);
      if (heading) {
        builder.text(markdown.slice(bodyStart, lineStart));
        builder.heading(heading.level, heading.text);
        bodyStart = lineEnd + 1;
      }
    }
    if (newline < 0) break;
    lineStart = newline + 1;
  }
  builder.text(markdown.slice(bodyStart));
  return builder.finish();
}

/**
 * Marks that stand for heading tags while the HTML goes through htmlToText: private-use
 * characters, which htmlToText keeps as text (and drops with a script or comment around them).
 * U+E000 + level (U+E001..U+E006) opens a heading of that level, U+E000 closes it.
 */
const CLOSE_CODE = 0xe000;
const MARKS = /[\uE000-\uE006]/g;

/** Spans [start, end) of the closing heading tags `</h1>`..`</h6>` (any case, spaces before `>`). */
function closingHeadingSpans(html: string): [number, number][] {
  const spans: [number, number][] = [];
  for (let i = html.indexOf('</'); i !== -1; i = html.indexOf('</', i + 1)) {
    const h = html[i + 2];
    const digit = html[i + 3];
    if ((h !== 'h' && h !== 'H') || digit === undefined || digit < '1' || digit > '6') continue;
    let j = i + 4;
    // Spaces are scanned once: the next `</` search starts past them, since they hold none.
    while (j < html.length && (html[j] === ' ' || html[j] === '\t' || html[j] === '\n' || html[j] === '\r')) j++;
    if (html[j] === '>') spans.push([i, j + 1]);
  }
  return spans;
}

/** The HTML with its heading tags replaced by marks (and a line break, as htmlToText gives a block tag). */
function markHeadings(html: string): string {
  const marks: { start: number; end: number; mark: string }[] = [
    ...headingTagSpans(html).map(([start, end]) => ({ start, end, mark: `\n${String.fromCharCode(CLOSE_CODE + Number(html[start + 2]))}` })),
    ...closingHeadingSpans(html).map(([start, end]) => ({ start, end, mark: `${String.fromCharCode(CLOSE_CODE)}\n` })),
  ].sort((a, b) => a.start - b.start);
  const out: string[] = [];
  let copied = 0;
  for (const { start, end, mark } of marks) {
    out.push(html.slice(copied, start), mark);
    copied = end;
  }
  out.push(html.slice(copied));
  return out.join('');
}

/**
 * A page's prolog declarations (`<?xml ...?>`, `<!doctype html>`, before any element) dropped:
 * htmlToText converts fragments, which have none, and would keep them as text. Comments between
 * them stay, for htmlToText to drop.
 */
function dropProlog(html: string): string {
  const kept: string[] = [];
  let i = 0;
  for (;;) {
    while (i < html.length && isRegexSpace(html.charCodeAt(i))) i++;
    const comment = html.startsWith('<!--', i);
    if (!comment && !html.startsWith('<!', i) && !html.startsWith('<?', i)) break;
    const stop = comment ? html.indexOf('-->', i + 4) : html.indexOf('>', i + 2);
    if (stop < 0) break;
    const end = stop + (comment ? 3 : 1);
    if (comment) kept.push(html.slice(i, end));
    i = end;
  }
  return i === 0 ? html : kept.join(' ') + ' ' + html.slice(i);
}

/** HTML split at its headings, the text of each part by htmlToText. */
function htmlSections(html: string): DocumentSection[] {
  const text = htmlToText(markHeadings(dropProlog(html.replace(MARKS, ' '))));
  const builder = new SectionBuilder();
  /** The open heading's level and text so far; 0 while in body text. */
  let level = 0;
  let headingParts: string[] = [];
  let from = 0;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : CLOSE_CODE;
    if (code < CLOSE_CODE || code > CLOSE_CODE + 6) continue;
    const part = text.slice(from, i);
    from = i + 1;
    if (level > 0) headingParts.push(part);
    else builder.text(part);
    // A heading opened inside another closes it, as HTML parsers do; a stray close is nothing.
    if (level > 0) builder.heading(level, headingParts.join(''));
    level = code - CLOSE_CODE;
    headingParts = [];
  }
  return builder.finish();
}

/** Control characters PDFium can report (soft-hyphen and non-character markers among them); never text. */
const PDF_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffe\uffff]/g;

/** A page's text with each line's whitespace runs made one space, blank lines dropped. */
function normalizePage(text: string): string {
  const lines: string[] = [];
  for (const raw of text.replace(PDF_CONTROL, '').split(/\r\n|\r|\n/)) {
    const line = raw.replace(/\s+/g, ' ').trim();
    if (line !== '') lines.push(line);
  }
  return lines.join('\n');
}

/**
 * One section per PDF page with text. A fresh PDFium instance per document: WebAssembly memory
 * never shrinks, so one shared instance would keep the largest PDF's size for the life of the
 * process (an instance starts in about 30 ms). The event loop is yielded between pages.
 */
async function pdfSections(bytes: Uint8Array): Promise<DocumentSection[]> {
  const { PDFiumLibrary } = await import('@hyzyla/pdfium');
  const library = await PDFiumLibrary.init();
  let document: PDFiumDocument | null = null;
  try {
    try {
      document = await library.loadDocument(bytes);
    } catch (error) {
      // PDFium's reason (corrupt, password required, unsupported security) is one fixed sentence.
      throw badRequest(`The PDF cannot be read: ${reason(error)}. Send an unencrypted, well-formed PDF`);
    }
    const sections: DocumentSection[] = [];
    const pages = document.getPageCount();
    for (let index = 0; index < pages; index++) {
      let raw: string;
      try {
        raw = document.getPage(index).getText();
      } catch (error) {
        throw badRequest(`Page ${index + 1} of the PDF cannot be read: ${reason(error)}`);
      }
      const text = normalizePage(raw);
      if (text !== '') sections.push({ headings: [], text });
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return sections;
  } finally {
    // The instance is dropped either way; after a WebAssembly abort these calls throw, and that
    // must not hide the error that caused it.
    try {
      document?.destroy();
      library.destroy();
    } catch {
      /* the instance is garbage now */
    }
  }
}

/** An error's message, for a 400 that passes on a library's reason. */
const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
