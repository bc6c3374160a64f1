#!/usr/bin/env node
// Splits long one-line string and template literals into `+`-joined pieces, so that the formatter (Biome, which
// never breaks a literal) can bring the line under 120 columns. The value is the same string, byte for byte: pieces
// end after a space or an escaped newline (`\n`) and never cut an escape sequence or a `${...}`. Only a literal on a
// line longer than 120 columns is touched (so a second run changes nothing). Left alone, for a hand fix: tagged
// templates (sql`...`), multi-line literals, literals in type positions, property names, imports and directives.
// Usage: node scripts/format/split-strings.mjs [--check] [file ...]   (no file: every checked file)
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { runFormatPass } from './source-files.mjs';

const MAX = 120;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const K = ts.SyntaxKind;

/** Parents in which `a + b` may stand for a literal without parentheses. */
function safeWithoutParens(node) {
  const p = node.parent;
  if (ts.isCallExpression(p) || ts.isNewExpression(p)) return p.arguments?.includes(node);
  if (ts.isArrayLiteralExpression(p)) return true;
  if (ts.isPropertyAssignment(p) || ts.isVariableDeclaration(p) || ts.isParameter(p)) return p.initializer === node;
  if (ts.isPropertyDeclaration(p)) return p.initializer === node;
  if (ts.isReturnStatement(p) || ts.isThrowStatement(p) || ts.isArrowFunction(p)) return true;
  if (ts.isConditionalExpression(p)) return p.whenTrue === node || p.whenFalse === node;
  if (ts.isBinaryExpression(p) && p.operatorToken.kind === K.EqualsToken) return p.right === node;
  // `x + ('a' + 'b')` is `x + 'a' + 'b'`: `+` groups to the left and the literal makes every step a string.
  if (ts.isBinaryExpression(p)) return p.operatorToken.kind === K.PlusToken;
  return false;
}

/** Whether a literal may become an expression at all (not a type, key, module name, directive, or tagged). */
function splittable(node) {
  const p = node.parent;
  if (ts.isTaggedTemplateExpression(p) || ts.isLiteralTypeNode(p) || ts.isExternalModuleReference(p)) return false;
  if (ts.isImportDeclaration(p) || ts.isExportDeclaration(p) || ts.isImportTypeNode?.(p)) return false;
  if ((ts.isPropertyAssignment(p) || ts.isPropertySignature?.(p) || ts.isMethodDeclaration(p)) && p.name === node)
    return false;
  if (ts.isEnumMember(p) || ts.isExpressionStatement(p) || ts.isCaseClause(p)) return false;
  if (ts.isJsxAttribute?.(p)) return false;
  return true;
}

/**
 * Cuts `inner` (the literal's source text between its delimiters) into pieces of at most `width` characters, each
 * ending after a space or an escaped newline; never inside `${...}` or an escape. Returns [] when it cannot be cut
 * so.
 */
function cut(inner, width, template) {
  const points = [];
  let depth = 0;
  for (let i = 0; i < inner.length; i++) {
    const ch = inner[i];
    if (ch === '\\') {
      // After an escaped newline is a cut point too (a string of lines: `'a=1\nb=2\n'`).
      if (inner[i + 1] === 'n' && depth === 0 && i + 2 < inner.length) points.push(i + 2);
      i++;
      continue;
    }
    if (template && ch === '$' && inner[i + 1] === '{' && depth === 0) {
      depth = 1;
      i++;
      continue;
    }
    if (depth > 0) {
      // Inside a substitution: skip nested braces and strings roughly (they hold no cut point anyway).
      if (ch === '{') depth++;
      else if (ch === '}') depth--;
      continue;
    }
    if (ch === ' ' && i + 1 < inner.length && inner[i + 1] !== ' ') points.push(i + 1);
  }
  const pieces = [];
  let start = 0;
  while (inner.length - start > width) {
    const fit = points.filter((p) => p > start && p - start <= width);
    if (fit.length === 0) return [];
    const at = fit[fit.length - 1];
    pieces.push(inner.slice(start, at));
    start = at;
  }
  pieces.push(inner.slice(start));
  // All or nothing: a piece still too long (a long `${...}`) means the literal wants a hand fix, not half a split.
  return pieces.length > 1 && pieces.every((p) => p.length <= width) ? pieces : [];
}

/** Splits the long literals of one file's text; returns the new text. */
export function splitText(fileName, text) {
  const lines = text.split('\n');
  if (!lines.some((l) => l.length > MAX)) return text;
  const kind = /\.(m|c)?js$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const edits = [];
  const visit = (node) => {
    const literal =
      node.kind === K.StringLiteral ||
      node.kind === K.NoSubstitutionTemplateLiteral ||
      node.kind === K.TemplateExpression;
    if (literal) {
      const start = node.getStart(sf);
      const { line } = sf.getLineAndCharacterOfPosition(start);
      const endLine = sf.getLineAndCharacterOfPosition(node.end).line;
      if (line === endLine && lines[line].length > MAX && splittable(node)) {
        const raw = text.slice(start, node.end);
        const q = raw[0];
        const indent = lines[line].length - lines[line].trimStart().length;
        // A piece fits at the indentation Biome gives a broken `+` chain (up to 4 more), with its quotes and ` +`;
        // a literal that fits but for what follows it on the line (`it('...', async () => {`) is cut short of that.
        const inner = raw.slice(1, -1);
        const excess = lines[line].length - MAX;
        const width = Math.max(40, Math.min(MAX - indent - 4 - 2 - 2 - 1, inner.length - excess));
        const pieces = cut(inner, width, q === '`');
        if (pieces.length > 0) {
          let out = pieces.map((p) => q + p + q).join(' + ');
          if (!safeWithoutParens(node)) out = `(${out})`;
          edits.push({ start, end: node.end, out });
        }
      }
      return; // no literal inside a literal's own text needs a visit (substitutions are rare and short)
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  edits.sort((a, b) => b.start - a.start);
  let out = text;
  for (const e of edits) out = out.slice(0, e.start) + e.out + out.slice(e.end);
  return out;
}

function main() {
  runFormatPass(ROOT, splitText, 'long literals to split');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
