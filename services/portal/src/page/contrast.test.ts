import { describe, expect, it } from 'vitest';
import { BLACK, contrastRatio, relativeLuminance, TEXT_CONTRAST, textColourOn, WHITE } from './contrast';

/** Every colour whose channels are multiples of 15 (0, 15, …, 255): 18³ colours across the cube. */
const GRID = Array.from({ length: 18 }, (_, i) => i * 15);
const COLOURS = GRID.flatMap((r) =>
  GRID.flatMap((g) => GRID.map((b) => `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`)),
);

describe('text on a brand colour (WCAG 2.2 contrast)', () => {
  it('measures the ratios WCAG gives for known pairs', () => {
    expect(relativeLuminance(BLACK)).toBe(0);
    expect(relativeLuminance(WHITE)).toBeCloseTo(1, 10);
    expect(contrastRatio(WHITE, BLACK)).toBeCloseTo(21, 10);
    expect(contrastRatio('#777777', WHITE)).toBeCloseTo(4.48, 2);
    expect(contrastRatio(WHITE, '#777777')).toBe(contrastRatio('#777777', WHITE));
  });

  it('puts white text on dark colours and black on light ones', () => {
    expect(textColourOn('#1f5fa8')).toBe(WHITE);
    expect(textColourOn('#0a3d62')).toBe(WHITE);
    expect(textColourOn('#ffe14d')).toBe(BLACK);
    expect(textColourOn('#ffffff')).toBe(BLACK);
    expect(textColourOn('#00ff00')).toBe(BLACK);
  });

  it('always reaches 4.5:1 with the colour it picks, whatever the brand colour', () => {
    const failing = COLOURS.filter((background) => contrastRatio(background, textColourOn(background)) < TEXT_CONTRAST);
    expect(COLOURS).toHaveLength(18 ** 3);
    expect(failing).toEqual([]);
  });
});
