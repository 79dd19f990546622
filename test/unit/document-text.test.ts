/**
 * Document text extraction: the type of a file name, sections of plain text, Markdown (ATX
 * headings, fenced code), HTML (headings, scripts and styles never text) and PDF (a two-page PDF
 * written here by hand, read by PDFium), and the 400s for bytes that are not what they claim.
 */
import { describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { documentSections, documentTypeOf, type DocumentType } from '../../core/files/document-text.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A PDF string literal's text: backslash, parentheses escaped. */
const pdfString = (s: string): string => `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;

/**
 * A minimal valid PDF: one page per entry, each line shown in Helvetica one under the other.
 * Objects: 1 catalog, 2 page tree, 3 font, then per page its page object and content stream,
 * and an xref table with every object's byte offset. `encrypt` adds a Standard security handler
 * whose user password is not the empty one, which a reader cannot open without the password.
 */
function buildPdf(pages: readonly (readonly string[])[], encrypt = false): Uint8Array {
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ')}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  pages.forEach((lines, i) => {
    const content = `BT /F1 12 Tf 72 720 Td 16 TL ${lines.map((l) => `${pdfString(l)} Tj T*`).join(' ')} ET`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    );
  });
  if (encrypt) objects.push(`<< /Filter /Standard /V 1 /R 2 /O <${'ab'.repeat(32)}> /U <${'cd'.repeat(32)}> /P -4 >>`);
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  const id = '<0123456789abcdef0123456789abcdef>';
  const extra = encrypt ? ` /Encrypt ${objects.length} 0 R /ID [${id} ${id}]` : '';
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${extra} >>\nstartxref\n${xref}\n%%EOF\n`;
  return utf8(pdf);
}

/** The QuarryError a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<QuarryError> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(QuarryError);
  return error as QuarryError;
}

describe('documentTypeOf', () => {
  it.each([
    ['notes.txt', 'text/plain'],
    ['README.TEXT', 'text/plain'],
    ['guide.md', 'text/markdown'],
    ['dir/sub/Guide.Markdown', 'text/markdown'],
    ['page.html', 'text/html'],
    ['C:\\docs\\page.HTM', 'text/html'],
    ['paper.final.pdf', 'application/pdf'],
  ] as const)('%s is %s', (name, type) => {
    expect(documentTypeOf(name)).toBe(type);
  });

  it.each(['data.csv', 'rows.jsonl', 'image.png', 'pdf', 'README', '.md', 'dir/.pdf', 'archive.pdf.zip', 'trailing.'])('%s is not a document', (name) => {
    expect(documentTypeOf(name)).toBeNull();
  });
});

describe('documentSections: plain text', () => {
  it('is one section without headings, line breaks normalized and blank runs made one blank line', async () => {
    const text = '\r\n  First line   \r\nsecond line\r\n\r\n\r\n\r\nNext paragraph\t\n\n';
    expect(await documentSections(utf8(text), 'text/plain')).toEqual([{ headings: [], text: '  First line\nsecond line\n\nNext paragraph' }]);
  });

  it('keeps runs of unchanged lines and trims each changed one, whatever the line ends', async () => {
    const text = 'a\nb  \nc\n \t \nd\n\ne\n\n\nf\u00a0\rg\r\r\rh';
    expect(await documentSections(utf8(text), 'text/plain')).toEqual([{ headings: [], text: 'a\nb\nc\n\nd\n\ne\n\nf\ng\n\nh' }]);
  });

  it('has no sections when empty or blank', async () => {
    expect(await documentSections(utf8(''), 'text/plain')).toEqual([]);
    expect(await documentSections(utf8(' \n\t\r\n '), 'text/plain')).toEqual([]);
  });

  it('drops a UTF-8 byte order mark and keeps any Unicode text', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('naïve 日本語 ☺')]);
    expect(await documentSections(bytes, 'text/plain')).toEqual([{ headings: [], text: 'naïve 日本語 ☺' }]);
  });
});

describe('documentSections: Markdown', () => {
  it('splits at ATX headings with the heading path above each section', async () => {
    const md = [
      'Preface before any heading.',
      '# Guide',
      'Intro to the guide.',
      '## Install ##',
      'Run the installer.',
      '### On Linux',
      'Use the package.',
      '## Use',
      'Call the API.',
      '# Appendix',
      '  ## Indented heading',
      'Notes.',
    ].join('\r\n');
    expect(await documentSections(utf8(md), 'text/markdown')).toEqual([
      { headings: [], text: 'Preface before any heading.' },
      { headings: ['Guide'], text: 'Intro to the guide.' },
      { headings: ['Guide', 'Install'], text: 'Run the installer.' },
      { headings: ['Guide', 'Install', 'On Linux'], text: 'Use the package.' },
      { headings: ['Guide', 'Use'], text: 'Call the API.' },
      { headings: ['Appendix', 'Indented heading'], text: 'Notes.' },
    ]);
  });

  it('does not take a # inside fenced code, without a space, past six, or indented four as a heading', async () => {
    const md = [
      '# Code',
      '```bash',
      '# a shell comment',
      '```',
      '#hashtag is text',
      '####### seven is text',
      '    # indented code',
      '~~~',
      '## still code',
      '~~~~',
      '## Real # heading #',
      'Body.',
    ].join('\n');
    const sections = await documentSections(utf8(md), 'text/markdown');
    expect(sections).toEqual([
      {
        headings: ['Code'],
        text: '```bash\n# a shell comment\n```\n#hashtag is text\n####### seven is text\n    # indented code\n~~~\n## still code\n~~~~',
      },
      { headings: ['Code', 'Real # heading'], text: 'Body.' },
    ]);
  });

  it('keeps a heading without text in the path of the deeper ones, and as text when nothing is under it', async () => {
    const md = '# A\n\n## B\n\nText under B.\n\n## Empty\n# C\n\n#   \n';
    expect(await documentSections(utf8(md), 'text/markdown')).toEqual([
      { headings: ['A', 'B'], text: 'Text under B.' },
      { headings: ['A'], text: 'Empty' },
      { headings: [], text: 'C' },
    ]);
  });
});

describe('documentSections: HTML', () => {
  it('splits at h1..h6, keeps the heading path, decodes entities and never reads scripts, styles or comments', async () => {
    const html = `<!doctype html><html><head><style>h1 { color: red }</style>
      <script>document.write("<h1>Injected</h1>"); var secret = 1;</script></head>
      <body><p>Before &amp; after</p>
      <h1 class="t">Guide</h1><p>Intro <b>text</b>.</p>
      <!-- <h2>Commented</h2> hidden -->
      <H2>Install &lt;fast&gt;</H2><p>Step one.</p><ul><li>a</li><li>b</li></ul>
      <h3>Deep</h3><p>Deep text.</p>
      <h2>Use</h2><p>Use it.</p><script>var h = '<h2>fake</h2>';</script>
      </body></html>`;
    const sections = await documentSections(utf8(html), 'text/html');
    expect(sections).toEqual([
      { headings: [], text: 'Before & after' },
      { headings: ['Guide'], text: 'Intro text.' },
      { headings: ['Guide', 'Install <fast>'], text: 'Step one.\na\nb' },
      { headings: ['Guide', 'Install <fast>', 'Deep'], text: 'Deep text.' },
      { headings: ['Guide', 'Use'], text: 'Use it.' },
    ]);
    const all = JSON.stringify(sections);
    for (const hidden of ['Injected', 'secret', 'color', 'Commented', 'fake']) expect(all).not.toContain(hidden);
  });

  it('drops the prolog of a whole page (XML declaration, doctype, comments between) but nothing after it', async () => {
    const html = '\uFEFF <?xml version="1.0"?>\n<!-- a --><!DOCTYPE html>\n<html><body><p>Text &lt;!doctype&gt; kept</p></body></html>';
    expect(await documentSections(utf8(html), 'text/html')).toEqual([{ headings: [], text: 'Text <!doctype> kept' }]);
    // An unterminated comment at the start is left to htmlToText, and the text after it is read.
    const [section] = await documentSections(utf8('<!-- never closed <p>x</p>'), 'text/html');
    expect(section?.text).toMatch(/\bx$/);
  });

  it('closes a heading opened inside another, and keeps the text of a heading never closed', async () => {
    const sections = await documentSections(utf8('<h1>Outer<h2>Inner</h2><p>Body</p><h3>Open <p>rest'), 'text/html');
    // An unclosed heading runs to the end, as a browser reads it: its text is the heading's.
    expect(sections).toEqual([
      { headings: ['Outer', 'Inner'], text: 'Body' },
      { headings: ['Outer', 'Inner'], text: 'Open rest' },
    ]);
    expect(await documentSections(utf8('<p>Lead text</p><h1>Title only'), 'text/html')).toEqual([
      { headings: [], text: 'Lead text' },
      { headings: [], text: 'Title only' },
    ]);
  });

  it('reads private-use characters of the page as spaces, never as heading marks', async () => {
    const sections = await documentSections(utf8('<p>a\uE001b\uE000c</p>'), 'text/html');
    expect(sections).toEqual([{ headings: [], text: 'a b c' }]);
  });
});

describe('documentSections: PDF', () => {
  it('reads one section per page, in order, whitespace normalized', async () => {
    const pdf = buildPdf([
      ['Quarry reads PDF files.', 'Second   line   of page one (with parens).'],
      [],
      ['Page three holds the end.'],
    ]);
    expect(await documentSections(pdf, 'application/pdf')).toEqual([
      { headings: [], text: 'Quarry reads PDF files.\nSecond line of page one (with parens).' },
      { headings: [], text: 'Page three holds the end.' },
    ]);
  });

  it.each([
    ['not a PDF at all', utf8('hello, world')],
    ['a PDF header and garbage', utf8('%PDF-1.4\n1 0 obj << /Type /Catalog')],
    ['a PDF cut short', buildPdf([['Some text']]).slice(0, 200)],
    ['an empty file', new Uint8Array(0)],
  ])('refuses %s with a 400', async (_name, bytes) => {
    const error = await rejection(documentSections(bytes, 'application/pdf'));
    expect(error.httpStatus).toBe(400);
    expect(error.message).toMatch(/^The PDF cannot be read: .+\. Send an unencrypted, well-formed PDF$/);
  });

  it('refuses a PDF encrypted with a password with a 400 saying so', async () => {
    const error = await rejection(documentSections(buildPdf([['Secret']], true), 'application/pdf'));
    expect(error.httpStatus).toBe(400);
    expect(error.message).toMatch(/password/i);
  });
});

describe('documentSections: bytes that are not UTF-8 text', () => {
  const textTypes: DocumentType[] = ['text/plain', 'text/markdown', 'text/html'];

  it.each(textTypes)('refuses invalid UTF-8 as %s with a 400', async (type) => {
    // Latin-1 "café", a lone continuation byte, and a truncated sequence.
    for (const bytes of [new Uint8Array([0x63, 0x61, 0x66, 0xe9]), new Uint8Array([0x80]), new Uint8Array([0x61, 0xe2, 0x82])]) {
      const error = await rejection(documentSections(bytes, type));
      expect(error.httpStatus).toBe(400);
      expect(error.message).toContain('not valid UTF-8');
    }
  });

  it.each(textTypes)('refuses NUL bytes (a binary file) as %s with a 400', async (type) => {
    const error = await rejection(documentSections(new Uint8Array([0x61, 0x00, 0x62]), type));
    expect(error.httpStatus).toBe(400);
    expect(error.message).toContain('NUL');
  });
});
