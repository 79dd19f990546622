/**
 * The two short tasks besides answers: naming a topic from its first message and suggesting
 * search queries from some texts. The prompts asked of a model, and the cleaning of what it
 * answers (models add quotes, numbering, "Title:" and blank lines whatever they are told).
 */
import type { ChatMessage } from '../domain/rag.js';

/** Longest topic name, in characters. */
export const TOPIC_NAME_MAX_CHARS = 100;

/** Words of the first message a topic is named after when no model names it. */
export const TOPIC_NAME_WORDS = 8;

/** Most suggested queries returned. */
export const SUGGESTION_LIMIT = 10;

/** Longest suggested query kept, in characters. */
const SUGGESTION_MAX_CHARS = 200;

/** Characters of the texts given to a model for suggestions (each text, and all together). */
const SUGGESTION_TEXT_CHARS = 4_000;
const SUGGESTION_TOTAL_CHARS = 16_000;

/** Name of a topic when nothing better can be made of its first message (e.g. only punctuation was sent). */
const FALLBACK_TOPIC_NAME = 'New topic';

/** The first `n` whitespace-separated words of `text`, single-spaced (a linear scan, bounded by `n`). */
export function firstWords(text: string, n: number): string {
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i <= text.length && words.length < n; i++) {
    const space = i === text.length || /\s/.test(text[i]!);
    if (space && start >= 0) {
      words.push(text.slice(start, i));
      start = -1;
    } else if (!space && start < 0) {
      start = i;
    }
  }
  return words.join(' ');
}

/** `s` cut to `max` characters, at the last space before the cut when there is one. */
function cutAt(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return (space > max / 2 ? cut.slice(0, space) : cut).trimEnd();
}

/** Leading list markers (`1.`, `2)`, `-`, `*`, `•`) and surrounding quotes or emphasis removed. */
function stripDecoration(line: string): string {
  let s = line.trim();
  let i = 0;
  while (i < s.length && s[i]! >= '0' && s[i]! <= '9') i++;
  if (i > 0 && i < s.length && (s[i] === '.' || s[i] === ')' || s[i] === ':')) s = s.slice(i + 1).trim();
  while (s.length > 0 && '-*•#>'.includes(s[0]!)) s = s.slice(1).trim();
  const quotes = '"\'`*_“”‘’';
  let a = 0;
  let b = s.length;
  while (a < b && quotes.includes(s[a]!)) a++;
  while (b > a && quotes.includes(s[b - 1]!)) b--;
  return s.slice(a, b).trim();
}

/**
 * The messages asking a model for a topic name: the instruction in the system message and the
 * first message alone as the user's, so that a provider that cannot follow instructions (the
 * extractive one) names the topic after the message itself.
 */
export function topicNameMessages(firstMessage: string): ChatMessage[] {
  return [
    {
      role: 'system',
      content: `You name conversations. Write a title of at most ${TOPIC_NAME_WORDS} words for the conversation that starts with the user's message. Answer with the title only: no quotes, no punctuation at the end.`,
    },
    { role: 'user', content: firstMessage },
  ];
}

/**
 * A topic name from a model's answer: its first non-empty line, without decoration or a
 * `Title:` label, single-spaced, at most {@link TOPIC_NAME_MAX_CHARS} characters. An answer with
 * nothing left falls back to the first words of the message, then to a fixed name: never empty.
 */
export function cleanTopicName(answer: string, firstMessage: string): string {
  const line = answer
    .split(/\r?\n/)
    .map((l) => stripDecoration(l))
    .find((l) => l !== '');
  let name = line ?? '';
  if (/^title\s*:/i.test(name)) name = stripDecoration(name.slice(name.indexOf(':') + 1));
  name = firstWords(name, 64);
  if (name === '') name = firstWords(firstMessage, TOPIC_NAME_WORDS);
  if (name === '') name = FALLBACK_TOPIC_NAME;
  return cutAt(name, TOPIC_NAME_MAX_CHARS);
}

/** The messages asking a model for suggested queries about `texts` (bounded), following `query` when given. */
export function suggestionMessages(texts: readonly string[], query: string | null): ChatMessage[] {
  const parts: string[] = [];
  let total = 0;
  for (const t of texts) {
    if (total >= SUGGESTION_TOTAL_CHARS) break;
    const piece = t.slice(0, Math.min(SUGGESTION_TEXT_CHARS, SUGGESTION_TOTAL_CHARS - total));
    parts.push(piece);
    total += piece.length;
  }
  const follow = query === null || query.trim() === '' ? '' : ` The user already searched for "${query.trim()}": suggest queries that go further.`;
  return [
    { role: 'system', content: 'You suggest search queries. Answer with one query per line and nothing else.' },
    {
      role: 'user',
      content: `Suggest ${SUGGESTION_LIMIT} short search queries a user could ask about these documents.${follow}\n\n${parts.join('\n\n')}`,
    },
  ];
}

/** Queries from a model's answer: one per line, undecorated, unique (case-insensitive), not the query itself. */
export function parseSuggestions(answer: string, query: string | null): string[] {
  const seen = new Set<string>();
  if (query !== null) seen.add(query.trim().toLowerCase());
  const out: string[] = [];
  for (const raw of answer.split(/\r?\n/)) {
    // "Here are some queries:" introduces the list; it is not one of them.
    if (raw.trimEnd().endsWith(':')) continue;
    const s = cutAt(firstWords(stripDecoration(raw), 64), SUGGESTION_MAX_CHARS);
    const key = s.toLowerCase();
    if (s === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(s);
  }
  return out;
}
