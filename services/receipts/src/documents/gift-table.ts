import { CONTENT_WIDTH, MARGIN, MUTED, type Sheet } from './sheet';

/**
 * The list of gifts every receipt carries: a header row, one row per gift, the total. Rows break
 * onto a new page (header repeated, under the caller's continuation heading) when the page is
 * full, so a donor with hundreds of gifts gets every one of them listed.
 */

export interface GiftColumn {
  header: string;
  /** Share of the content width. */
  share: number;
  align: 'left' | 'right' | 'center';
}

export interface GiftTable {
  columns: readonly GiftColumn[];
  rows: readonly (readonly string[])[];
  totalLabel: string;
  total: string;
  /** Draws the heading of a continuation page (the cursor is at the page's top). */
  continued: (sheet: Sheet) => void;
}

const PAD = 3;
const BODY_SIZE = 9;
const HEAD_SIZE = 8;

function columnXs(columns: readonly GiftColumn[]): { x: number; width: number }[] {
  const shares = columns.reduce((sum, column) => sum + column.share, 0);
  let x = MARGIN.left;
  return columns.map((column) => {
    const width = (CONTENT_WIDTH * column.share) / shares;
    const place = { x, width };
    x += width;
    return place;
  });
}

function rowHeight(sheet: Sheet, cells: readonly string[], widths: number[], size: number, bold: boolean): number {
  const heights = cells.map((cell, index) =>
    sheet.measure(cell, { size, weight: bold ? 'bold' : 'regular', width: (widths[index] ?? 0) - 2 * PAD }),
  );
  return Math.max(...heights) + 2 * PAD;
}

function drawRow(
  sheet: Sheet,
  table: GiftTable,
  cells: readonly string[],
  options: { size: number; bold: boolean; color?: string },
): void {
  const places = columnXs(table.columns);
  const height = rowHeight(
    sheet,
    cells,
    places.map((place) => place.width),
    options.size,
    options.bold,
  );
  cells.forEach((cell, index) => {
    const place = places[index];
    const column = table.columns[index];
    if (!place || !column) return;
    sheet.place(cell, place.x + PAD, sheet.y + PAD, {
      size: options.size,
      weight: options.bold ? 'bold' : 'regular',
      width: place.width - 2 * PAD,
      align: column.align,
      ...(options.color ? { color: options.color } : {}),
    });
  });
  sheet.space(height);
}

function drawHeader(sheet: Sheet, table: GiftTable): void {
  drawRow(
    sheet,
    table,
    table.columns.map((column) => column.header),
    { size: HEAD_SIZE, bold: true, color: MUTED },
  );
  sheet.rule('#444444');
}

export function drawGiftTable(sheet: Sheet, table: GiftTable): void {
  const widths = columnXs(table.columns).map((place) => place.width);
  const headerHeight = rowHeight(
    sheet,
    table.columns.map((column) => column.header),
    widths,
    HEAD_SIZE,
    true,
  );
  const totalCells = table.columns.map((_, index) =>
    index === 0 ? table.totalLabel : index === table.columns.length - 1 ? table.total : '',
  );
  // The header never stands alone at a page's foot: it needs room for a row under it.
  const firstRow = table.rows[0] ?? totalCells;
  if (sheet.remaining() < headerHeight + rowHeight(sheet, firstRow, widths, BODY_SIZE, false)) {
    sheet.newPage();
    table.continued(sheet);
  }
  drawHeader(sheet, table);
  table.rows.forEach((cells, index) => {
    const height = rowHeight(sheet, cells, widths, BODY_SIZE, false);
    if (sheet.remaining() < height) {
      sheet.newPage();
      table.continued(sheet);
      drawHeader(sheet, table);
    }
    if (index % 2 === 1) {
      sheet.pdf.rect(MARGIN.left, sheet.y, CONTENT_WIDTH, height).fillColor('#f1f1f1').fill();
    }
    drawRow(sheet, table, cells, { size: BODY_SIZE, bold: false });
  });
  const totalHeight = rowHeight(sheet, totalCells, widths, BODY_SIZE, true);
  if (sheet.remaining() < totalHeight + 2) {
    sheet.newPage();
    table.continued(sheet);
  }
  sheet.rule('#444444');
  drawRow(sheet, table, totalCells, { size: BODY_SIZE, bold: true });
}
