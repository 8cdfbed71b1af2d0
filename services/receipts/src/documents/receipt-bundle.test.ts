import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunction } from '../../../../infra/constructs/bundle';
import { RECEIPT_FONT_DIR, RECEIPT_FONT_FILES } from './font-files';
import type { ReceiptDocument } from './receipt-document';
import { germanReceipt, pdfText, popplerOn } from './testing-receipts';

/**
 * The documents module bundled as a Lambda function's code is (infra's `buildFunction`, with
 * `bundleOptions` and `RECEIPT_FONT_FILES` as the files beside the code), then loaded the way
 * the runtime loads it: a fresh Node process outside the repository, no node_modules to fall back
 * on. pdfkit reads its standard fonts' metrics from files beside its own code; a bundle that let
 * it touch one would fail here.
 */

const ENTRY = join(import.meta.dirname, 'index.ts');
let outdir = '';

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'receipts-bundle-'));
  await buildFunction(ENTRY, outdir, { define: {}, alias: {}, files: RECEIPT_FONT_FILES }, 'bundled');
}, 120_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/** Renders in a child process from the bundle's index.mjs; the PDF comes back base64 on stdout. */
function renderFromBundle(doc: ReceiptDocument): Buffer {
  const script = [
    `const { renderReceiptPdf } = await import(${JSON.stringify(pathToFileURL(join(outdir, 'index.mjs')).href)});`,
    'const pdf = await renderReceiptPdf(JSON.parse(process.env.RECEIPT_DOCUMENT));',
    "process.stdout.write(Buffer.from(pdf).toString('base64'));",
  ].join('\n');
  const base64 = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: '/',
    env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: '', RECEIPT_DOCUMENT: JSON.stringify(doc) },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  return Buffer.from(base64, 'base64');
}

describe('the receipts’ documents in a Lambda bundle', () => {
  it('carry their fonts beside the code, where RECEIPT_FONT_FILES puts them', () => {
    expect(Object.keys(RECEIPT_FONT_FILES).sort()).toEqual([
      `${RECEIPT_FONT_DIR}/DejaVuSans-Bold.ttf`,
      `${RECEIPT_FONT_DIR}/DejaVuSans.ttf`,
    ]);
    for (const [target, source] of Object.entries(RECEIPT_FONT_FILES)) {
      expect(existsSync(source)).toBe(true);
      expect(existsSync(join(outdir, target))).toBe(true);
    }
  });

  it('render a German confirmation outside the repository, its font embedded and its text extractable', () => {
    const pdf = renderFromBundle(germanReceipt());
    const text = pdfText(pdf, []).replace(/\s+/g, ' ');
    expect(text).toContain('Sammelbestätigung über Geldzuwendungen');
    expect(text).toContain('eintausendzweihundertvierunddreißig Euro sechsundfünfzig Cent');
    expect(text).toContain('Anlage zur Sammelbestätigung vom 20.01.2026');
    const fonts = popplerOn('pdffonts', pdf);
    expect(fonts).toMatch(/DejaVuSans\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes/);
    expect(fonts).not.toMatch(/Helvetica|Times|Courier/);
  });

  it('fail with the paths they tried when the fonts were not copied beside the code', () => {
    const fonts = join(outdir, RECEIPT_FONT_DIR);
    renameSync(fonts, `${fonts}-away`);
    try {
      expect(() => renderFromBundle(germanReceipt())).toThrow(/Receipt font DejaVuSans\.ttf not found/);
    } finally {
      renameSync(`${fonts}-away`, fonts);
    }
  });
});
