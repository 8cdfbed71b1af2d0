/**
 * Colour contrast by WCAG 2.2 (success criterion 1.4.3, "Contrast (Minimum)": text 4.5:1; the
 * relative luminance and contrast ratio as the WCAG glossary defines them). An organisation picks
 * any brand colour; text on it is black or white, whichever contrasts more: one of them always
 * reaches at least 4.58:1.
 */
export type Rgb = readonly [number, number, number];

/** `#rrggbb` (the settings' format) → its channels, 0–255. */
export function parseHex(colour: string): Rgb {
  const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour);
  if (!match) throw new RangeError(`Not a #rrggbb colour: ${colour}`);
  return [
    Number.parseInt(match[1] ?? '', 16),
    Number.parseInt(match[2] ?? '', 16),
    Number.parseInt(match[3] ?? '', 16),
  ];
}

/** WCAG relative luminance: sRGB channels linearised, weighted 0.2126 / 0.7152 / 0.0722. */
export function relativeLuminance(colour: string): number {
  const [r, g, b] = parseHex(colour).map((channel) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** (L1 + 0.05) / (L2 + 0.05), the lighter over the darker: 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

export const WHITE = '#ffffff';
export const BLACK = '#000000';

/** The text colour for a background: white or black, whichever has the higher contrast. */
export function textColourOn(background: string): typeof WHITE | typeof BLACK {
  return contrastRatio(background, WHITE) >= contrastRatio(background, BLACK) ? WHITE : BLACK;
}

/** WCAG AA for normal text. */
export const TEXT_CONTRAST = 4.5;
