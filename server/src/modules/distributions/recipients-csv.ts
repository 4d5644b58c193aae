/**
 * A distribution's recipients as one CSV file (`listDistributionRecipients` with `format=csv`), for printing cards
 * and letters for people without e-mail: names, the kiosk code and page, the personal link and its QR code.
 *
 * The file is for spreadsheets and mail merge, so it is written the way response exports write theirs by default:
 * a UTF-8 byte order mark, `\r\n`, every cell holding a line break, `;` or a tab quoted, and a text from the
 * customer's data that a spreadsheet would run as a formula prefixed with `'` (the rule of exports' `escapeFormula`,
 * repeated here because the exports module already depends on this one). Streamed in keyset pages, so a
 * distribution of any size costs one page of memory.
 */
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Config } from '../../config.js';
import type { DbOrTx } from '../../db/database.js';
import type { Tenant } from '../../db/tenant.js';
import * as repo from './repository.js';
import type { RecipientRow } from './repository.js';
import {
  accessCodeOf,
  answerUrl,
  distributionIdOrThrow,
  findDistributionOrThrow,
  kioskUrl,
  surveyIdOrThrow,
} from './service.js';
import type { RecipientStatus } from './tables.js';
import { linkKeyOf, personalToken } from './tokens.js';

const PAGE = 1000;

const csvOptions = { record_delimiter: 'windows' as const, quoted_match: /[\r\n;\t]/ };

const FORMULA_START = /^'*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
/** A customer's text as a cell no spreadsheet evaluates (exports' rule: one more leading `'`). */
const text = (value: string | null) => (value === null ? '' : FORMULA_START.test(value) ? `'${value}` : value);

const header = [
  'respondentExternalId',
  'firstName',
  'lastName',
  'department',
  'location',
  'jobTitle',
  'email',
  'status',
  'accessCode',
  'kioskPage',
  'link',
  'qrCode',
];

export interface CsvFile {
  filename: string;
  body: Readable;
}

export async function recipientsCsv(
  db: DbOrTx,
  config: Config,
  tenant: Tenant,
  ids: { surveyId: string; distributionId: string },
  status: RecipientStatus | undefined,
): Promise<CsvFile> {
  const distribution = await findDistributionOrThrow(
    db,
    tenant,
    surveyIdOrThrow(ids.surveyId),
    distributionIdOrThrow(ids.distributionId),
  );
  const key = await linkKeyOf(db, config.linkSecret);
  const kioskPage = distribution.method === 'kiosk' ? kioskUrl(config) : '';
  const line = (row: RecipientRow) => {
    const link = answerUrl(config, personalToken(key, tenant, distribution.id, row.external_id));
    return [
      text(row.external_id),
      text(row.first_name),
      text(row.last_name),
      text(row.department),
      text(row.location),
      text(row.job_title),
      text(row.email),
      row.status,
      accessCodeOf(key, distribution, row) ?? '',
      kioskPage,
      link,
      `${link}/qr.svg`,
    ];
  };
  async function* lines(): AsyncGenerator<string> {
    yield `\ufeff${stringify([header], csvOptions)}`;
    let after = '';
    for (;;) {
      const rows = await repo.recipientsAfter(db, tenant, distribution.id, { status, after, limit: PAGE });
      if (rows.length > 0) yield stringify(rows.map(line), csvOptions);
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1]!.external_id;
    }
  }
  return { filename: `recipients-${distribution.id}.csv`, body: Readable.from(lines()) };
}
