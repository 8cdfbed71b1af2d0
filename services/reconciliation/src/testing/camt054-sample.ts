/**
 * A realistic Swiss camt.054.001.08 credit notification (as PostFinance sends for a QR-IBAN
 * account), with the payments to be reconciled filled in:
 *
 * 1. a single credit transfer whose EndToEndId is the payment uuid as 32 hex digits;
 * 2. a QR-bill payment with a QR reference (QRR) and the payment uuid in the additional
 *    information (Ustrd), EndToEndId `NOTPROVIDED`;
 * 3. a batch booking ("Sammelgutschrift") of two QR-bill payments: one with the 32-hex uuid as
 *    EndToEndId, one with the hyphenated uuid in Ustrd.
 *
 * The file gives 4 rows, in this order. Amounts are minor units (CHF unless said otherwise).
 */
import { minorToDecimal } from '../domain/money';
import { escapeXml } from './camt054-builder';

export interface SamplePayment {
  readonly uuid: string;
  readonly amount_minor: number;
  readonly currency?: string;
}

export interface Camt054SampleInput {
  readonly single: SamplePayment;
  readonly qrBill: SamplePayment;
  readonly batch: readonly [SamplePayment, SamplePayment];
  /** YYYY-MM-DD; value dates are the same day. */
  readonly bookingDate: string;
}

const hex = (uuid: string): string => uuid.replaceAll('-', '');
const money = (payment: SamplePayment): string => {
  const currency = payment.currency ?? 'CHF';
  return `<Amt Ccy="${escapeXml(currency)}">${minorToDecimal(payment.amount_minor, currency)}</Amt>`;
};

/** A 27-digit Swiss QR reference: 26 digits and their recursive mod-10 check digit. */
export function qrReference(digits26: string): string {
  const table = [0, 9, 4, 6, 8, 2, 7, 1, 3, 5];
  let carry = 0;
  for (const digit of digits26) carry = table[(carry + Number(digit)) % 10] ?? 0;
  return `${digits26}${(10 - carry) % 10}`;
}

const debtor = (name: string, street: string, town: string, iban: string): string =>
  `<RltdPties><Dbtr><Pty><Nm>${name}</Nm><PstlAdr><StrtNm>${street}</StrtNm><TwnNm>${town}</TwnNm><Ctry>CH</Ctry></PstlAdr></Pty></Dbtr><DbtrAcct><Id><IBAN>${iban}</IBAN></Id></DbtrAcct></RltdPties>`;

function qrTx(payment: SamplePayment, refs: string, remittance: string, seq: number): string {
  return `
          <TxDtls>
            <Refs><AcctSvcrRef>2025033100${seq}QRR</AcctSvcrRef>${refs}</Refs>
            ${money(payment)}
            <CdtDbtInd>CRDT</CdtDbtInd>
            <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>VCOM</SubFmlyCd></Fmly></Domn></BkTxCd>
            ${debtor(`Spender ${seq}`, 'Bahnhofstrasse 1', 'Bern', 'CH5604835012345678009')}
            <RmtInf>${remittance}</RmtInf>
            <RltdDts><AccptncDtTm>2025-03-30T09:1${seq}:00</AccptncDtTm></RltdDts>
          </TxDtls>`;
}

export function camt054Sample(input: Camt054SampleInput): string {
  const { single, qrBill, batch, bookingDate } = input;
  const day = escapeXml(bookingDate);
  const batchTotal = batch[0].amount_minor + batch[1].amount_minor;
  const batchCurrency = batch[0].currency ?? 'CHF';
  const qrr = `<Strd><CdtrRefInf><Tp><CdOrPrtry><Prtry>QRR</Prtry></CdOrPrtry></Tp><Ref>${qrReference('21000000000313947143000901')}</Ref></CdtrRefInf></Strd>`;
  const entry = (ref: string, amount: string, body: string): string => `
    <Ntry>
      <NtryRef>${ref}</NtryRef>
      ${amount}
      <CdtDbtInd>CRDT</CdtDbtInd>
      <RvslInd>false</RvslInd>
      <Sts><Cd>BOOK</Cd></Sts>
      <BookgDt><Dt>${day}</Dt></BookgDt>
      <ValDt><Dt>${day}</Dt></ValDt>
      <AcctSvcrRef>${ref}-ASR</AcctSvcrRef>
      <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>AUTT</SubFmlyCd></Fmly></Domn></BkTxCd>
      <NtryDtls>${body}
      </NtryDtls>
    </Ntry>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <BkToCstmrDbtCdtNtfctn>
    <GrpHdr>
      <MsgId>20250331375204000006</MsgId>
      <CreDtTm>${day}T20:01:10</CreDtTm>
      <MsgRcpt><Nm>Stiftung Beispiel</Nm></MsgRcpt>
      <AddtlInf>SPS/2.1/PROD</AddtlInf>
    </GrpHdr>
    <Ntfctn>
      <Id>20250331375204000006-1</Id>
      <CreDtTm>${day}T20:01:10</CreDtTm>
      <Acct>
        <Id><IBAN>CH4431999123000889012</IBAN></Id>
        <Ccy>CHF</Ccy>
        <Ownr><Nm>Stiftung Beispiel</Nm></Ownr>
        <Svcr><FinInstnId><BICFI>POFICHBEXXX</BICFI><Nm>PostFinance AG</Nm></FinInstnId></Svcr>
      </Acct>${entry(
        '250331CH0A1B2C3D',
        money(single),
        `
          <TxDtls>
            <Refs><AcctSvcrRef>20250331001SCT</AcctSvcrRef><InstrId>INSTR-0001</InstrId><EndToEndId>${hex(single.uuid)}</EndToEndId></Refs>
            ${money(single)}
            <CdtDbtInd>CRDT</CdtDbtInd>
            ${debtor('Anna Muster', 'Musterweg 3', 'Zürich', 'CH9300762011623852957')}
            <RmtInf><Ustrd>Spende Frühling</Ustrd></RmtInf>
          </TxDtls>`,
      )}${entry(
        '250331CH0A1B2C3E',
        money(qrBill),
        qrTx(qrBill, '<EndToEndId>NOTPROVIDED</EndToEndId>', `<Ustrd>Spende ${qrBill.uuid}</Ustrd>${qrr}`, 2),
      )}${entry(
        '250331CH0A1B2C3F',
        money({ uuid: '', amount_minor: batchTotal, currency: batchCurrency }),
        `
          <Btch><NbOfTxs>2</NbOfTxs><TtlAmt Ccy="${batchCurrency}">${minorToDecimal(batchTotal, batchCurrency)}</TtlAmt><CdtDbtInd>CRDT</CdtDbtInd></Btch>${qrTx(
            batch[0],
            `<EndToEndId>${hex(batch[0].uuid)}</EndToEndId>`,
            '<Ustrd>Mitgliederbeitrag</Ustrd>',
            3,
          )}${qrTx(batch[1], '<EndToEndId>NOTPROVIDED</EndToEndId>', `<Ustrd>Spende ${batch[1].uuid}</Ustrd>`, 4)}`,
      )}
    </Ntfctn>
  </BkToCstmrDbtCdtNtfctn>
</Document>
`;
}
