import { describe, expect, it } from 'vitest';
import { safeFileName } from './blueprint';

describe('a blueprint file name as a key segment', () => {
  it('drops folders and control characters, keeps the rest as sent', () => {
    expect(safeFileName('C:\\Users\\anna\\März 100%.csv')).toBe('März 100%.csv');
    expect(safeFileName('../../x/a\u0000b\tc\u007f.csv')).toBe('abc.csv');
  });

  it('cuts long names by character, never inside one, and drops lone surrogates', () => {
    const name = safeFileName(`a${'😀'.repeat(150)}.csv`);
    expect([...name]).toHaveLength(120);
    expect(() => encodeURIComponent(name)).not.toThrow();
    expect(safeFileName('x\uD800y.csv')).toBe('xy.csv');
  });

  it('names an empty or dot-only name "upload"', () => {
    expect(safeFileName('')).toBe('upload');
    expect(safeFileName('a/..')).toBe('upload');
    expect(safeFileName(' . ')).toBe('upload');
  });
});
