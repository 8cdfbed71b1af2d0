import { createRequire } from 'node:module';

/**
 * The receipts' fonts: DejaVu Sans, regular and bold, embedded (subset) in every PDF. The PDF
 * standard fonts are never used: they are not embedded, and pdfkit reads their metrics from
 * files beside its own code, which a bundle does not carry.
 *
 * In the repository (tests, `pnpm start`) the TTFs are read from the dejavu-fonts-ttf package.
 * In a Lambda bundle they are files beside the code: infra passes `RECEIPT_FONT_FILES` as the
 * receipts function's `BundleTime.files`, which copies each source to its path in the bundle.
 * This module imports nothing but Node, so infra can read it without loading pdfkit.
 */

/** The folder of the bundle (beside `index.mjs`) that holds the fonts. */
export const RECEIPT_FONT_DIR = 'receipt-fonts';

export const RECEIPT_FONTS = { regular: 'DejaVuSans.ttf', bold: 'DejaVuSans-Bold.ttf' } as const;

export type ReceiptFontWeight = keyof typeof RECEIPT_FONTS;

/** A file of the installed package, or nothing where the package is absent (inside a bundle). */
function installed(resolve: () => string): string[] {
  try {
    return [resolve()];
  } catch {
    return [];
  }
}

/**
 * Path in the bundle → source path: what infra copies beside the receipts function's code.
 * Empty when evaluated inside a bundle, where the package is not installed (nobody copies from
 * there).
 */
export const RECEIPT_FONT_FILES: Readonly<Record<string, string>> = Object.fromEntries([
  ...installed(() => createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')).map((source) => [
    `${RECEIPT_FONT_DIR}/${RECEIPT_FONTS.regular}`,
    source,
  ]),
  ...installed(() => createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')).map(
    (source) => [`${RECEIPT_FONT_DIR}/${RECEIPT_FONTS.bold}`, source],
  ),
]);
