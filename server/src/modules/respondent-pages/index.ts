/**
 * Respondent pages: the HTML a respondent opens outside `/api/v1` and without an API key — the answer page and
 * unsubscribe page a link opens (`/s/{token}`, its QR code, `/u/{token}`) and the kiosk page (`/k`). What a link or
 * a code opens is the distributions module's; these pages show it and take the answers.
 *
 * Other modules and the HTTP layer import only from this file.
 */
export { answerPages } from './answer-page.js';
export { kioskPages } from './kiosk-page.js';
