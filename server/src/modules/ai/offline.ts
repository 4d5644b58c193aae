/** The built-in provider: no network, deterministic (question bank for generation, wink-nlp for analysis). */
import { analyseOffline } from './offline-analyse.js';
import { generateOffline } from './offline-generate.js';
import { OFFLINE_ANALYSIS_MODEL } from './nlp.js';
import { OFFLINE_GENERATION_MODEL } from './question-bank.js';
import type { AiProvider, AnalysisInput, GeneratedDraft, GenerateRequest, TextFindings } from './provider.js';

export class OfflineProvider implements AiProvider {
  readonly name = 'offline' as const;
  readonly model = OFFLINE_ANALYSIS_MODEL;
  readonly generationModel = OFFLINE_GENERATION_MODEL;

  async generateSurvey(request: GenerateRequest): Promise<GeneratedDraft> {
    // Drafted from the question bank, valid by construction: nothing to adjust.
    return { draft: generateOffline(request), adjustments: [] };
  }

  async analyseComments(input: AnalysisInput): Promise<TextFindings> {
    return analyseOffline(input);
  }
}
