/**
 * What the analysis reads from responses of the newer answer shapes: an N/A (null) is no score, so it stays out of
 * a question's average and count, as in analytics; the text of an "Other" choice is a comment of its question.
 */
import { describe, expect, it } from 'vitest';
import type { components } from '@survey-service/sdk';
import { prepareInput } from '../../server/src/modules/ai/analysis.js';

type Question = components['schemas']['Question'];

const questions: Question[] = [
  {
    id: 'q_1',
    type: 'rating',
    text: 'Your manager',
    description: null,
    required: false,
    min: 1,
    max: 5,
    minLabel: null,
    maxLabel: null,
    allowNotApplicable: true,
  },
  {
    id: 'q_2',
    type: 'single_choice',
    text: 'Where do you work?',
    description: null,
    required: true,
    choices: [
      { id: 'c_1', label: 'Office' },
      { id: 'c_2', label: 'Home' },
    ],
    allowOther: true,
  },
];

describe('the analysis input', () => {
  it('leaves N/A out of averages and reads "Other" texts as comments', () => {
    const { input, commentResponse } = prepareInput(
      { title: 'Pulse', questions },
      [
        {
          id: 'rsp_1',
          answers: [
            { questionId: 'q_1', value: 4 },
            { questionId: 'q_2', value: 'c_1' },
          ],
        },
        {
          id: 'rsp_2',
          answers: [
            { questionId: 'q_1', value: null },
            { questionId: 'q_2', value: 'other', other: 'On the road with jane@example.com' },
          ],
        },
        { id: 'rsp_3', answers: [{ questionId: 'q_1', value: 2 }] },
      ],
      {},
    );
    expect(input.questions[0]).toMatchObject({ id: 'q_1', averageScore: 3, answerCount: 2 });
    expect(input.questions[1]).toMatchObject({ id: 'q_2', answerCount: 2 });
    expect(input.comments).toHaveLength(1);
    expect(input.comments[0]!.questionId).toBe('q_2');
    // Redacted as every comment is.
    expect(input.comments[0]!.text).toMatch(/^On the road with /);
    expect(input.comments[0]!.text).not.toContain('jane@example.com');
    expect(commentResponse).toEqual([1]);
  });
});
