#!/usr/bin/env node
// Rewraps comments to the 120-column rule (docs/architecture.md §2): the formatter (Biome) breaks code but never
// comments. Only a comment line longer than 120 columns is touched, so running it twice changes nothing and short
// lines keep the author's breaks: the words past column 120 move to the start of the next line of the same
// paragraph (which may push that one's last words on in turn), or to a new line where the paragraph ends there.
//   - `//` comment lines of the same indentation form a block; a JSDoc or `/* */` comment is a block.
//   - A paragraph ends at an empty comment line, a list item (`- `, `* `, `1. `), a JSDoc tag (`@param`), a
//     markdown table row or code fence, or a change of indentation. Table rows, fenced code and lines indented four
//     or more spaces (code samples) are left alone, and no word is split, so a long URL stays whole.
//   - A one-line `/** ... */` that is too long becomes a three-part JSDoc block.
//   - A trailing `// comment` that makes a code line too long moves above the line, at the code's indentation.
// Comments are found with the TypeScript scanner, so `//` inside strings, templates and regexes is never touched.
// Usage: node scripts/format/rewrap-comments.mjs [--check] [file ...]   (no file: every checked file)
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runFormatPass } from './source-files.mjs';

const MAX = 120;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Trailing comments that are directives to a tool: never moved. */
const DIRECTIVE = /^\/\/\s*(@ts-|biome-ignore|eslint|prettier|istanbul|c8|#)/;
const ITEM = /^(?:[-*+]|\d+[.)]) /;

/** Every comment range in the file, and the spans of string and template literals (no line may start in one). */
function scan(fileName, text) {
  const kind = /\.(m|c)?js$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const comments = new Map();
  const literals = [];
  const add = (ranges) => {
    for (const r of ranges ?? []) comments.set(r.pos, r);
  };
  const visit = (node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    if (
      ts.isTemplateLiteral(node) ||
      ts.isStringLiteral(node) ||
      ts.isRegularExpressionLiteral(node) ||
      node.kind === ts.SyntaxKind.JsxText
    ) {
      literals.push([node.getStart(sf), node.end]);
    }
    for (const c of node.getChildren(sf)) visit(c);
  };
  visit(sf);
  const sorted = [...comments.values()].sort((a, b) => a.pos - b.pos);
  const ranges = sorted.filter((r, i) => i === 0 || r.pos >= sorted[i - 1].end);
  return { ranges, literals };
}

const leading = (s) => s.length - s.trimStart().length;

/** Where a comment body's continuation lines start: past a list marker, else at the body's own indentation. */
function continuationIndent(body) {
  const n = leading(body);
  const m = ITEM.exec(body.slice(n));
  return n + (m ? m[0].length : 0);
}

/** The index of the space to break `body` at so that `prefix + body[0..k]` fits, or -1. */
function breakPoint(prefix, body) {
  const start = leading(body);
  const candidates = [];
  let tick = false;
  for (let k = start + 1; k < body.length && prefix.length + k <= MAX; k++) {
    if (body[k] === '`') tick = !tick;
    if (body[k] !== ' ' || body[k - 1] === ' ') continue;
    const rest = body.slice(k + 1);
    // A line must not start with what would read as a list item, a tag or a table row.
    if (ITEM.test(rest) || rest.startsWith('@') || rest.startsWith('|')) continue;
    candidates.push({ k, tick });
  }
  const outside = candidates.filter((c) => !c.tick);
  const pick = outside.length > 0 ? outside : candidates;
  return pick.length > 0 ? pick[pick.length - 1].k : -1;
}

/**
 * Rewraps the body lines of one comment block (prefix: the `//` or ` * ` before each body). Returns the new lines.
 */
function wrapBlock(prefix, bodies) {
  const out = [...bodies];
  let fence = false;
  const frozen = (body) => {
    const t = body.trimStart();
    return fence || t.startsWith('```') || t.startsWith('|') || leading(body) >= 4;
  };
  for (let i = 0; i < out.length; i++) {
    const body = out[i];
    const wasFence = fence;
    if (body.trimStart().startsWith('```')) fence = !fence;
    if (wasFence || body.trimStart().startsWith('```')) continue;
    if (prefix.length + body.length <= MAX || frozen(body)) continue;
    const k = breakPoint(prefix, body);
    if (k < 0) continue;
    const head = body.slice(0, k).trimEnd();
    const tail = body.slice(k + 1).trim();
    const indent = continuationIndent(body);
    out[i] = head;
    const next = out[i + 1];
    const joinable =
      next !== undefined &&
      next.trim() !== '' &&
      !frozen(next) &&
      leading(next) === indent &&
      !ITEM.test(next.trimStart()) &&
      !next.trimStart().startsWith('@');
    if (joinable) out[i + 1] = `${' '.repeat(indent)}${tail} ${next.trimStart()}`;
    else out.splice(i + 1, 0, `${' '.repeat(indent)}${tail}`);
  }
  return out;
}

const join = (prefix, body) => (body === '' ? prefix.trimEnd() : prefix + body);

/** Rewraps the comments of one file's text; returns the new text. */
export function rewrapText(fileName, text) {
  if (!text.split('\n').some((l) => l.length > MAX)) return text;
  const { ranges, literals } = scan(fileName, text);
  const lines = text.split('\n');
  const starts = [];
  for (let i = 0, p = 0; i < lines.length; i++) {
    starts.push(p);
    p += lines[i].length + 1;
  }
  const lineOf = (pos) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const inLiteral = (pos) => literals.some(([a, b]) => pos > a && pos < b);

  // Each edit replaces lines [from, to) with new lines; collected, then applied from the end.
  const edits = [];
  const ownLine = new Map(); // line index -> indent, for own-line `//` comments
  for (const r of ranges) {
    const line = lineOf(r.pos);
    const col = r.pos - starts[line];
    const before = lines[line].slice(0, col);
    const body = text.slice(r.pos, r.end);
    if (r.kind === ts.SyntaxKind.SingleLineCommentTrivia) {
      if (before.trim() === '') {
        if (/^\/\/( |$)/.test(body)) ownLine.set(line, col);
      } else if (lines[line].length > MAX && !DIRECTIVE.test(body) && /^\/\/ /.test(body)) {
        // A trailing comment: above the code line, unless that line starts inside a literal.
        if (inLiteral(starts[line])) continue;
        const indent = ' '.repeat(leading(lines[line]));
        const prefix = `${indent}// `;
        const wrapped = wrapBlock(prefix, [body.slice(3)]).map((b) => join(prefix, b));
        edits.push({ from: line, to: line + 1, lines: [...wrapped, before.trimEnd()] });
      }
      continue;
    }
    // A block comment.
    const first = line;
    const last = lineOf(r.end - 1);
    if (first === last) {
      const one = /^\/\*\*\s(.*?)\s*\*\/$/.exec(body);
      if (
        !one ||
        lines[line].length <= MAX ||
        before.trim() !== '' ||
        lines[line].slice(col + body.length).trim() !== ''
      )
        continue;
      const prefix = `${before} * `;
      const wrapped = wrapBlock(prefix, [one[1]]).map((b) => join(prefix, b));
      edits.push({ from: line, to: line + 1, lines: [`${before}/**`, ...wrapped, `${before} */`] });
      continue;
    }
    // Middle lines of a multi-line block: `<indent> * body`, all with the same prefix.
    const mids = [];
    for (let i = first + 1; i < last; i++) mids.push(lines[i]);
    if (!mids.some((l) => l.length > MAX)) continue;
    const m = /^(\s*\* ?)/.exec(mids[0] ?? '');
    if (!m) continue;
    const star = m[1].endsWith(' ') ? m[1] : `${m[1]} `;
    const bare = star.trimEnd();
    if (!mids.every((l) => l.startsWith(star) || l === bare || l.trimEnd() === bare)) continue;
    const bodies = mids.map((l) => (l.startsWith(star) ? l.slice(star.length) : ''));
    const wrapped = wrapBlock(star, bodies).map((b) => join(star, b));
    edits.push({ from: first + 1, to: last, lines: wrapped });
  }
  // Blocks of own-line `//` comments: consecutive lines, same indentation.
  const own = [...ownLine.keys()].sort((a, b) => a - b);
  for (let i = 0; i < own.length; ) {
    let j = i;
    while (j + 1 < own.length && own[j + 1] === own[j] + 1 && ownLine.get(own[j + 1]) === ownLine.get(own[i])) j++;
    const from = own[i];
    const to = own[j] + 1;
    const block = lines.slice(from, to);
    if (block.some((l) => l.length > MAX)) {
      const prefix = `${' '.repeat(ownLine.get(from))}// `;
      const bodies = block.map((l) => l.slice(prefix.length - 1).replace(/^ /, ''));
      edits.push({ from, to, lines: wrapBlock(prefix, bodies).map((b) => join(prefix, b)) });
    }
    i = j + 1;
  }
  edits.sort((a, b) => b.from - a.from);
  for (const e of edits) lines.splice(e.from, e.to - e.from, ...e.lines);
  return lines.join('\n');
}

function main() {
  runFormatPass(ROOT, rewrapText, 'comments to rewrap');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
