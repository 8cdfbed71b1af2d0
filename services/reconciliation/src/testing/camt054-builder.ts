/**
 * Builds camt.054 documents of any version from .02 to .08 for tests: the version decides the
 * namespace, the status form (`<Sts>BOOK</Sts>` up to .05, `<Sts><Cd>BOOK</Cd></Sts>` from .06)
 * and where a transaction's amount goes (.02 has no TxDtls/Amt: AmtDtls/TxAmt/Amt instead).
 */

export type Camt054Version = '02' | '03' | '04' | '05' | '06' | '07' | '08';
export const CAMT054_VERSIONS: readonly Camt054Version[] = ['02', '03', '04', '05', '06', '07', '08'];

export interface CamtTx {
  /** Omitted: the transaction has no amount of its own. */
  readonly amount?: { readonly text: string; readonly currency: string };
  /** Put the amount in AmtDtls/TxAmt/Amt even where TxDtls/Amt exists. */
  readonly amountInDetails?: boolean;
  readonly credit?: boolean;
  readonly endToEndId?: string;
  readonly creditorReference?: string;
  readonly unstructured?: readonly string[];
  readonly accountServicerReference?: string;
}

export interface CamtEntry {
  readonly amount?: { readonly text: string; readonly currency: string };
  readonly credit?: boolean;
  readonly bookingDate?: string;
  /** Write BookgDt/DtTm (with this time) instead of BookgDt/Dt. */
  readonly bookingTime?: string;
  readonly valueDate?: string;
  readonly status?: string;
  readonly entryReference?: string;
  readonly accountServicerReference?: string;
  readonly additionalInfo?: string;
  /** Undefined: no NtryDtls at all. */
  readonly transactions?: readonly CamtTx[];
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]};`);
}

const element = (name: string, text: string | undefined, attributes = ''): string =>
  text === undefined ? '' : `<${name}${attributes}>${escapeXml(text)}</${name}>`;

const amount = (name: string, value: CamtEntry['amount']): string =>
  value ? element(name, value.text, ` Ccy="${escapeXml(value.currency)}"`) : '';

const indicator = (credit: boolean | undefined): string =>
  credit === undefined ? '' : element('CdtDbtInd', credit ? 'CRDT' : 'DBIT');

function transaction(tx: CamtTx, version: Camt054Version): string {
  const inDetails = tx.amountInDetails || version === '02';
  const refs =
    tx.endToEndId !== undefined || tx.accountServicerReference !== undefined
      ? `<Refs>${element('AcctSvcrRef', tx.accountServicerReference)}${element('EndToEndId', tx.endToEndId)}</Refs>`
      : '';
  const remittance =
    tx.unstructured || tx.creditorReference !== undefined
      ? `<RmtInf>${(tx.unstructured ?? []).map((text) => element('Ustrd', text)).join('')}${
          tx.creditorReference === undefined
            ? ''
            : `<Strd><CdtrRefInf><Tp><CdOrPrtry><Prtry>QRR</Prtry></CdOrPrtry></Tp>${element('Ref', tx.creditorReference)}</CdtrRefInf></Strd>`
        }</RmtInf>`
      : '';
  return [
    '<TxDtls>',
    refs,
    inDetails ? '' : amount('Amt', tx.amount),
    version === '02' ? '' : indicator(tx.credit),
    inDetails && tx.amount ? `<AmtDtls><TxAmt>${amount('Amt', tx.amount)}</TxAmt></AmtDtls>` : '',
    remittance,
    '</TxDtls>',
  ].join('');
}

function entry(value: CamtEntry, version: Camt054Version): string {
  const status =
    value.status === undefined
      ? ''
      : Number(version) >= 6
        ? `<Sts><Cd>${value.status}</Cd></Sts>`
        : element('Sts', value.status);
  const booking =
    value.bookingDate === undefined
      ? ''
      : value.bookingTime === undefined
        ? `<BookgDt>${element('Dt', value.bookingDate)}</BookgDt>`
        : `<BookgDt>${element('DtTm', `${value.bookingDate}T${value.bookingTime}`)}</BookgDt>`;
  const details =
    value.transactions === undefined
      ? ''
      : `<NtryDtls>${value.transactions.map((tx) => transaction(tx, version)).join('')}</NtryDtls>`;
  return [
    '<Ntry>',
    element('NtryRef', value.entryReference),
    amount('Amt', value.amount),
    indicator(value.credit),
    '<RvslInd>false</RvslInd>',
    status,
    booking,
    value.valueDate === undefined ? '' : `<ValDt>${element('Dt', value.valueDate)}</ValDt>`,
    element('AcctSvcrRef', value.accountServicerReference),
    '<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>AUTT</SubFmlyCd></Fmly></Domn></BkTxCd>',
    details,
    element('AddtlNtryInf', value.additionalInfo),
    '</Ntry>',
  ].join('');
}

/** A whole camt.054 document with one notification holding `entries`. */
export function buildCamt054(entries: readonly CamtEntry[], version: Camt054Version = '08'): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.${version}">`,
    '<BkToCstmrDbtCdtNtfctn>',
    '<GrpHdr><MsgId>TEST-MSG-1</MsgId><CreDtTm>2025-03-31T18:00:00</CreDtTm></GrpHdr>',
    '<Ntfctn><Id>TEST-NTF-1</Id><CreDtTm>2025-03-31T18:00:00</CreDtTm>',
    '<Acct><Id><IBAN>CH9300762011623852957</IBAN></Id></Acct>',
    ...entries.map((value) => entry(value, version)),
    '</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>\n',
  ].join('');
}
