/**
 * The answer page's messages for a multiple-choice question with both bounds: too few and too many selections are
 * told apart by the count chosen, in the page's language, not by the wording of the shared rule's message.
 */
import { describe, expect, it } from 'vitest';
import { problemsByQuestion } from '../../server/src/modules/respondent-pages/answer-page.js';
import { wordsFor } from '../../server/src/modules/distributions/interface-words.js';
import { normaliseQuestions } from '../../server/src/modules/surveys/questions.js';

const { questions, problems } = normaliseQuestions([
  {
    id: 'q_pick',
    type: 'multiple_choice',
    text: 'Pick two or three',
    choices: ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, label: id.toUpperCase() })),
    minSelections: 2,
    maxSelections: 3,
  },
]);

describe('problemsByQuestion, multiple choice with bounds', () => {
  it('asks for at least the minimum when too few are chosen, and at most the maximum when too many', () => {
    expect(problems).toEqual([]);
    const told = (value: string[]) => problemsByQuestion(questions, [{ questionId: 'q_pick', value }]).get('q_pick');
    expect(told(['a'])).toEqual(['Choose at least 2.']);
    expect(told(['a', 'b', 'c', 'd'])).toEqual(['Choose at most 3.']);
    expect(told(['a', 'b'])).toBeUndefined();
    expect(told(['a', 'b', 'c'])).toBeUndefined();
  });

  it('says it in the language of the page', () => {
    const german = wordsFor('de');
    const said = problemsByQuestion(questions, [{ questionId: 'q_pick', value: ['a'] }], german).get('q_pick');
    expect(said).toEqual([german.text('chooseAtLeast', { min: 2 })]);
    expect(said?.[0]).not.toContain('at least');
  });
});
