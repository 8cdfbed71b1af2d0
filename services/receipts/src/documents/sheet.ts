import type { ReceiptFontWeight } from './font-files';
import { receiptFontPath } from './font-paths';

/**
 * A thin cursor over a pdfkit document: the receipts lay out top to bottom, each block placed at
 * `y` and measured before it is drawn, so a template knows whether the next block still fits
 * (the German model must fit one A4 page) and lists break onto new pages between rows, never
 * inside one.
 */

/** A4 in PostScript points (210 × 297 mm). */
export const A4 = { width: 595.28, height: 841.89 } as const;
export const MARGIN = { top: 50, bottom: 56, left: 56, right: 56 } as const;
export const CONTENT_WIDTH = A4.width - MARGIN.left - MARGIN.right;

export const INK = '#111111';
export const MUTED = '#555555';
export const VOID_RED = '#c40000';

export interface TextOptions {
  size?: number;
  weight?: ReceiptFontWeight;
  x?: number;
  width?: number;
  align?: 'left' | 'right' | 'center' | 'justify';
  color?: string;
  /** Space after the block, in points. */
  after?: number;
  lineGap?: number;
}

export class Sheet {
  y: number = MARGIN.top;

  constructor(readonly pdf: PDFKit.PDFDocument) {}

  /** Sets the font by its file (cached by pdfkit per document under the same key) and size. */
  use(weight: ReceiptFontWeight, size: number): this {
    this.pdf.font(receiptFontPath(weight), size);
    return this;
  }

  /** The height a block of text takes with these options, without drawing it. */
  measure(text: string, options: TextOptions = {}): number {
    this.use(options.weight ?? 'regular', options.size ?? 10);
    return this.pdf.heightOfString(text, { width: options.width ?? CONTENT_WIDTH, lineGap: options.lineGap ?? 1.5 });
  }

  /** Draws a block of text at the cursor (or at `x`) and moves the cursor below it. */
  text(text: string, options: TextOptions = {}): this {
    const width = options.width ?? CONTENT_WIDTH;
    const height = this.measure(text, options);
    this.pdf.fillColor(options.color ?? INK);
    this.pdf.text(text, options.x ?? MARGIN.left, this.y, {
      width,
      align: options.align ?? 'left',
      lineGap: options.lineGap ?? 1.5,
    });
    this.y += height + (options.after ?? 0);
    return this;
  }

  /** Draws text at a fixed place without moving the cursor (table cells, page furniture). */
  place(text: string, x: number, y: number, options: TextOptions = {}): number {
    const width = options.width ?? CONTENT_WIDTH;
    const height = this.measure(text, options);
    this.pdf.fillColor(options.color ?? INK);
    this.pdf.text(text, x, y, { width, align: options.align ?? 'left', lineGap: options.lineGap ?? 1.5 });
    return height;
  }

  space(points: number): this {
    this.y += points;
    return this;
  }

  /** A horizontal rule across the content width at the cursor. */
  rule(color = '#999999'): this {
    this.pdf
      .moveTo(MARGIN.left, this.y)
      .lineTo(MARGIN.left + CONTENT_WIDTH, this.y)
      .lineWidth(0.6)
      .strokeColor(color)
      .stroke();
    return this;
  }

  /** A thin frame around a block already drawn from `top` to the cursor. */
  frame(top: number, padding = 6, x = MARGIN.left, width = CONTENT_WIDTH): this {
    this.pdf
      .rect(x, top - padding, width, this.y - top + 2 * padding)
      .lineWidth(0.6)
      .strokeColor('#777777')
      .stroke();
    return this;
  }

  /** What is left of the page above the bottom margin. */
  remaining(): number {
    return A4.height - MARGIN.bottom - this.y;
  }

  newPage(): this {
    this.pdf.addPage({ size: 'A4', margins: MARGIN });
    this.y = MARGIN.top;
    return this;
  }

  /**
   * Text in the bottom margin (page numbers): pdfkit starts a new page for text below the margin,
   * so the margin is lifted while it is drawn.
   */
  footer(text: string, y: number, options: TextOptions = {}): void {
    const margins = this.pdf.page.margins;
    this.pdf.page.margins = { ...margins, bottom: 0 };
    this.place(text, MARGIN.left, y, options);
    this.pdf.page.margins = margins;
  }
}
