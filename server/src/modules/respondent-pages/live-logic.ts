/**
 * The answer page's one script: it shows and hides questions as the answers change (display logic), with the
 * surveys module's own `displayedQuestions`, and keeps the form's list of shown questions current so that the post
 * is stored at once. Without it the page still works: the server shows the questions the posted answers call for.
 * The script is constant, so the Content-Security-Policy names it by its hash and allows nothing else.
 */
import { createHash } from 'node:crypto';
import { displayLogicSource } from '../surveys/index.js';

/** Reads a question's answer from its fieldset, as the server reads the post (`answersFromForm`), for the rules. */
const pageScript = `(function () {
${displayLogicSource()}
var form = document.querySelector('form[data-logic]');
if (!form) return;
var questions = JSON.parse(form.getAttribute('data-logic'));
var shownField = form.querySelector('input[name="survey.shown"]');
function answerOf(question) {
  var group = document.getElementById(question.id + '-group');
  if (!group) return undefined;
  var chosen = Array.prototype.slice.call(group.querySelectorAll('input:checked')).map(function (input) { return input.value; });
  if (question.type === 'multiple_choice') return chosen.length > 0 ? chosen : undefined;
  if (question.type === 'single_choice') return chosen[0];
  if (question.type === 'nps' || question.type === 'rating') {
    if (chosen.length === 0) return undefined;
    return chosen[0] === 'na' ? null : Number(chosen[0]);
  }
  var typed = Array.prototype.slice.call(group.querySelectorAll('input[type=number], input[type=date], input[type=text], select, textarea'))
    .filter(function (input) { return input.value !== ''; });
  if (question.type === 'number') return typed.length > 0 && typed[0].value.trim() !== '' && isFinite(Number(typed[0].value)) ? Number(typed[0].value) : typed.length > 0 ? typed[0].value : undefined;
  return chosen.length > 0 || typed.length > 0 ? true : undefined;
}
function update() {
  var answers = new Map();
  questions.forEach(function (question) {
    var answer = answerOf(question);
    if (answer !== undefined) answers.set(question.id, answer);
  });
  var shown = displayedQuestions(questions, answers);
  questions.forEach(function (question) {
    var group = document.getElementById(question.id + '-group');
    if (!group) return;
    group.hidden = !shown.has(question.id);
    group.disabled = !shown.has(question.id);
  });
  if (shownField) shownField.value = questions.filter(function (question) { return shown.has(question.id); }).map(function (question) { return question.id; }).join(',');
}
form.addEventListener('change', update);
form.addEventListener('input', update);
})();`;

export const liveLogicScript = pageScript;
/** The CSP source that allows exactly this script. */
export const liveLogicHash = `'sha256-${createHash('sha256').update(pageScript).digest('base64')}'`;
