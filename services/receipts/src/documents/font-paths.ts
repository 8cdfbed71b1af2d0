import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RECEIPT_FONT_DIR, RECEIPT_FONT_FILES, RECEIPT_FONTS, type ReceiptFontWeight } from './font-files';

/**
 * Where this process finds each font, looked up once: first `receipt-fonts/` beside the bundle
 * (this module is in `index.mjs` or in `chunks/`, one folder down), then the package in the
 * repository. A font found nowhere fails the first render with the paths it tried.
 */
const found = new Map<ReceiptFontWeight, string>();

export function receiptFontPath(weight: ReceiptFontWeight): string {
  const known = found.get(weight);
  if (known) return known;
  const file = RECEIPT_FONTS[weight];
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, RECEIPT_FONT_DIR, file),
    join(dirname(here), RECEIPT_FONT_DIR, file),
    RECEIPT_FONT_FILES[`${RECEIPT_FONT_DIR}/${file}`] ?? '',
  ];
  const path = candidates.find((candidate) => candidate !== '' && existsSync(candidate));
  if (!path) throw new Error(`Receipt font ${file} not found (looked at ${candidates.join(', ')})`);
  found.set(weight, path);
  return path;
}
