/**
 * Runs command sequences against one service: each sequence in an organization of its own (raised rate limits),
 * its people created by PUT, its first survey created and launched.
 */
import fc from 'fast-check';
import type { TestService } from '../helpers/service.js';
import type { TestSmtp } from '../distributions/smtp.js';
import { tenantWithRaisedLimits } from '../helpers/surveys.js';
import { createSurvey, deptArb, putRespondent, type Cmd, type Real } from './commands.js';
import { BOUNCING_PERSON, personId, POPULATION, type Dept, type Model } from './model.js';

/** Who exists when a run starts (undefined: no record yet), and the first survey's settings. */
export interface Initial {
  people: (Dept | undefined)[];
  allowMultiple: boolean;
  anonymous: boolean;
}

export const initialArb: fc.Arbitrary<Initial> = fc.record({
  people: fc.array(fc.option(deptArb, { freq: 5, nil: undefined }), { minLength: POPULATION, maxLength: POPULATION }),
  allowMultiple: fc.boolean(),
  anonymous: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
});

export interface Harness {
  t: TestService;
  smtp: TestSmtp;
  /** Called before each command runs. */
  onCommand?: (command: Cmd) => void;
}

let runs = 0;

export async function setup(h: Harness, initial: Initial, log: string[]): Promise<{ model: Model; real: Real }> {
  const tenant = await tenantWithRaisedLimits(h.t);
  const tag = `r${++runs}-${tenant.organizationId.slice(-8).toLowerCase()}`;
  const model: Model = {
    tag,
    threshold: 5,
    people: Array.from({ length: POPULATION }, (_, i) => ({
      externalId: personId(i),
      email: i === BOUNCING_PERSON ? `p${i}.bounce.${tag}@example.com` : `p${i}.${tag}@example.com`,
      record: null,
    })),
    surveys: [],
    responses: [],
    events: [],
    accessFiles: [],
    clock: 0,
  };
  const real: Real = {
    t: h.t,
    smtp: h.smtp,
    client: tenant.live,
    organizationId: tenant.organizationId,
    log,
  };
  log.push(
    `  organization ${tenant.organizationId}; people ${initial.people.map((d, i) => `${personId(i)}:${d === undefined ? 'absent' : (d ?? 'null')}`).join(' ')}`,
  );
  for (const [i, department] of initial.people.entries())
    if (department !== undefined) await putRespondent(model, real, i, department);
  await createSurvey(model, real, initial, true);
  return { model, real };
}

/** Runs one sequence; a failure's message ends with what the run did. */
export async function runSequence(h: Harness, initial: Initial, commands: Iterable<Cmd>): Promise<void> {
  const log: string[] = [];
  try {
    // The same commands, each logged as it runs (fast-check still records which ran, for shrinking).
    const logged = [...commands].map((c) => ({
      check: (m: Readonly<Model>) => c.check(m),
      run: async (m: Model, r: Real) => {
        r.log.push(c.toString());
        h.onCommand?.(c);
        await c.run(m, r);
      },
      toString: () => c.toString(),
    }));
    await fc.asyncModelRun(() => setup(h, initial, log), logged);
  } catch (error) {
    if (error instanceof Error) error.message += `\n\nWhat the run did:\n${log.join('\n')}`;
    throw error;
  }
}
