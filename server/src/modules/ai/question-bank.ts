/**
 * The offline provider's curated question bank: for each survey topic, the words (lemmas) that reveal it in a
 * prompt, a title, and questions in the order a survey designer would ask them. Agreement statements use a 1–5
 * scale labelled "Strongly disagree" … "Strongly agree"; NPS questions use 0–10.
 */
import type { components } from '../../generated/openapi.js';

type QuestionInput = components['schemas']['QuestionInput'];

const agree = (text: string): QuestionInput => ({
  type: 'rating',
  text,
  min: 1,
  max: 5,
  minLabel: 'Strongly disagree',
  maxLabel: 'Strongly agree',
  required: true,
});
const scale = (text: string, minLabel: string, maxLabel: string): QuestionInput => ({
  type: 'rating',
  text,
  min: 1,
  max: 5,
  minLabel,
  maxLabel,
  required: true,
});
const open = (text: string): QuestionInput => ({ type: 'text', text, required: false, maxLength: 2000 });
const single = (text: string, labels: string[]): QuestionInput => ({
  type: 'single_choice',
  text,
  required: true,
  choices: labels.map((label) => ({ label })),
});
const multiple = (text: string, labels: string[], maxSelections?: number): QuestionInput => ({
  type: 'multiple_choice',
  text,
  required: false,
  choices: labels.map((label) => ({ label })),
  ...(maxSelections ? { maxSelections } : {}),
});

export const ENPS_QUESTION: QuestionInput = {
  type: 'nps',
  text: 'How likely are you to recommend this company as a place to work to a friend?',
  required: true,
};
export const CUSTOMER_NPS_QUESTION: QuestionInput = {
  type: 'nps',
  text: 'How likely are you to recommend us to a friend or colleague?',
  required: true,
};

export interface Topic {
  key: string;
  /** Lemmas (and a few multi-word cues) that reveal the topic in a prompt. */
  cues: string[];
  title: string;
  description: string;
  questions: QuestionInput[];
}

export const topics: Topic[] = [
  {
    key: 'enps',
    cues: ['enps', 'e-nps', 'employee net promoter', 'place to work', 'net promoter'],
    title: 'Employee Net Promoter survey',
    description: 'How likely you are to recommend us as an employer, and why.',
    questions: [
      ENPS_QUESTION,
      open('What is the main reason for your score?'),
      open('What one change would make you more likely to recommend us?'),
    ],
  },
  {
    key: 'customer_nps',
    cues: ['customer', 'client', 'nps', 'product', 'service', 'buyer', 'user', 'purchase'],
    title: 'Customer satisfaction survey',
    description: 'Tell us how we are doing.',
    questions: [
      CUSTOMER_NPS_QUESTION,
      scale('How satisfied are you with our product overall?', 'Very dissatisfied', 'Very satisfied'),
      scale('How easy was it to get help when you needed it?', 'Very difficult', 'Very easy'),
      single('How long have you been a customer?', [
        'Less than 6 months',
        '6–12 months',
        '1–3 years',
        'More than 3 years',
      ]),
      multiple(
        'What do you value most about us?',
        ['Product quality', 'Price', 'Customer support', 'Ease of use', 'Reliability'],
        2,
      ),
      open('What is the main reason for your score?'),
      open('What could we do better?'),
    ],
  },
  {
    key: 'engagement',
    cues: [
      'engagement',
      'engage',
      'engaged',
      'motivation',
      'motivate',
      'morale',
      'satisfaction',
      'annual',
      'employee',
      'quarterly',
    ],
    title: 'Employee engagement survey',
    description: 'Help us understand what makes work here good, and what would make it better.',
    questions: [
      agree('I am proud to work for this company.'),
      agree('I see myself still working here in two years.'),
      agree('My work gives me a feeling of personal accomplishment.'),
      agree('I know what is expected of me at work.'),
      agree('I have the materials and equipment I need to do my work well.'),
      agree('I believe in the direction the company is taking.'),
      agree('Someone at work cares about me as a person.'),
      open('What is the one thing we should change to make this a better place to work?'),
      open('What do you enjoy most about working here?'),
    ],
  },
  {
    key: 'manager',
    cues: ['manager', 'management', 'leadership', 'leader', 'supervisor', 'boss', '360', 'upward', 'lead'],
    title: 'Manager effectiveness survey',
    description: 'Confidential feedback that helps managers support their teams better.',
    questions: [
      agree('My manager gives me useful feedback on my work.'),
      agree('My manager keeps me informed about what is going on.'),
      agree('My manager treats me with respect.'),
      agree('My manager supports my professional development.'),
      agree('I can raise concerns with my manager without fear.'),
      scale('How often do you have a one-to-one with your manager?', 'Never', 'Every week'),
      open('What should your manager keep doing?'),
      open('What should your manager do differently?'),
    ],
  },
  {
    key: 'onboarding',
    cues: [
      'onboarding',
      'onboard',
      'new hire',
      'newcomer',
      'first week',
      'first day',
      'joiner',
      'induction',
      'orientation',
      'hire',
    ],
    title: 'Onboarding experience survey',
    description: 'Tell us how your first weeks went.',
    questions: [
      agree('My first week was well organised.'),
      agree('I had the equipment and accounts I needed on my first day.'),
      agree('I understand what is expected of me in my role.'),
      agree('My team made me feel welcome.'),
      agree('I know whom to ask when I need help.'),
      single('Did you have an onboarding buddy?', ['Yes, and it helped', 'Yes, but it did not help much', 'No']),
      open('What would have helped you most in your first weeks?'),
    ],
  },
  {
    key: 'exit',
    cues: [
      'exit',
      'leave',
      'leaver',
      'leaving',
      'departure',
      'resign',
      'resignation',
      'offboarding',
      'quit',
      'attrition',
    ],
    title: 'Exit survey',
    description: 'Thank you for your time with us. Your honest answers help us improve.',
    questions: [
      single('What is the main reason you are leaving?', [
        'Career growth',
        'Compensation',
        'Manager',
        'Workload',
        'Relocation',
        'Personal reasons',
        'Other',
      ]),
      agree('I would consider working here again in the future.'),
      agree('I was fairly paid for the work I did.'),
      agree('I had opportunities to grow here.'),
      ENPS_QUESTION,
      open('What could we have done to keep you?'),
      open('What did you value most about working here?'),
    ],
  },
  {
    key: 'wellbeing',
    cues: ['wellbeing', 'well-being', 'wellness', 'burnout', 'stress', 'mental', 'health', 'balance', 'happiness'],
    title: 'Wellbeing check-in',
    description: 'How are you doing? Your answers help us support you better.',
    questions: [
      scale('How would you rate your overall wellbeing at work this month?', 'Very poor', 'Excellent'),
      agree('I can switch off from work outside working hours.'),
      agree('My workload allows me to take the breaks I need.'),
      agree('I feel comfortable talking about stress at work.'),
      agree('I know what wellbeing support the company offers.'),
      open('What would most improve your wellbeing at work?'),
    ],
  },
  {
    key: 'inclusion',
    cues: [
      'inclusion',
      'inclusive',
      'diversity',
      'diverse',
      'dei',
      'belonging',
      'belong',
      'equity',
      'fairness',
      'discrimination',
    ],
    title: 'Inclusion and belonging survey',
    description: 'Help us build a workplace where everyone belongs.',
    questions: [
      agree('I feel I belong at this company.'),
      agree('I can be myself at work.'),
      agree('People here are treated fairly regardless of their background.'),
      agree('My ideas are heard, even when they differ from the majority.'),
      agree('The company is genuinely committed to diversity and inclusion.'),
      open('What could we do to make everyone feel more included?'),
    ],
  },
  {
    key: 'workload',
    cues: [
      'workload',
      'capacity',
      'overtime',
      'overwork',
      'pressure',
      'deadline',
      'busy',
      'staffing',
      'resourcing',
      'focus',
    ],
    title: 'Workload survey',
    description: 'Help us understand whether workloads are sustainable.',
    questions: [
      agree('My workload is manageable.'),
      agree('I have enough time for focused work.'),
      agree('Deadlines on my team are realistic.'),
      scale('How many hours a week do you usually work beyond your contract?', 'None', 'More than 10'),
      multiple(
        'What takes most of your time away from your main work?',
        ['Meetings', 'E-mail and chat', 'Administrative tasks', 'Unplanned requests', 'Waiting on others'],
        2,
      ),
      open('What would make your workload more manageable?'),
    ],
  },
  {
    key: 'growth',
    cues: [
      'growth',
      'career',
      'development',
      'learning',
      'learn',
      'training',
      'promotion',
      'skill',
      'progression',
      'mentoring',
    ],
    title: 'Career growth survey',
    description: 'Tell us how we can support your development.',
    questions: [
      agree('I have opportunities to learn and grow here.'),
      agree('I understand what I need to do to progress in my career here.'),
      agree('I had a meaningful conversation about my development in the last six months.'),
      agree('Promotions here go to the people who deserve them.'),
      multiple(
        'Which kinds of development would help you most?',
        ['Training courses', 'Mentoring', 'Stretch projects', 'Conferences', 'Job rotation'],
        2,
      ),
      open('What would help you grow most in the next year?'),
    ],
  },
  {
    key: 'pulse',
    cues: ['pulse', 'check-in', 'checkin', 'weekly', 'monthly', 'short', 'quick'],
    title: 'Pulse survey',
    description: 'A short check-in: it takes about two minutes.',
    questions: [
      scale('How happy are you at work this week?', 'Very unhappy', 'Very happy'),
      agree('I have what I need to do my job well.'),
      agree('I feel recognised for the work I do.'),
      open('Anything you would like to share with us?'),
    ],
  },
  {
    key: 'communication',
    cues: [
      'communication',
      'communicate',
      'transparency',
      'transparent',
      'information',
      'town hall',
      'all-hands',
      'internal',
    ],
    title: 'Internal communication survey',
    description: 'Tell us how well information reaches you.',
    questions: [
      agree('I get the information I need to do my job.'),
      agree("Leadership communicates openly about the company's plans."),
      agree('I hear about important changes before they happen.'),
      multiple(
        'Where do you prefer to get company news?',
        ['All-hands meetings', 'E-mail newsletter', 'Chat channels', 'My manager', 'Intranet'],
        2,
      ),
      open('How could we communicate better?'),
    ],
  },
  {
    key: 'recognition',
    cues: ['recognition', 'recognise', 'recognize', 'appreciation', 'appreciate', 'reward', 'praise'],
    title: 'Recognition survey',
    description: 'Tell us whether good work is seen and valued.',
    questions: [
      agree('I receive appropriate recognition when I do good work.'),
      agree("My colleagues show appreciation for each other's work."),
      single('How do you prefer to be recognised?', ['In public', 'In private', 'In writing', 'Through rewards']),
      open('Tell us about a time you felt recognised here.'),
    ],
  },
  {
    key: 'tools',
    cues: ['tool', 'tools', 'equipment', 'software', 'laptop', 'it', 'technology', 'system', 'hardware'],
    title: 'Tools and equipment survey',
    description: 'Tell us whether your tools help you or get in the way.',
    questions: [
      agree('I have the tools I need to do my job well.'),
      agree('Our internal systems are reliable.'),
      scale('How satisfied are you with IT support?', 'Very dissatisfied', 'Very satisfied'),
      open('Which tool slows you down the most, and why?'),
    ],
  },
  {
    key: 'compensation',
    cues: ['compensation', 'pay', 'salary', 'benefit', 'bonus', 'reward', 'wage', 'pension'],
    title: 'Compensation and benefits survey',
    description: 'Tell us how you see your pay and benefits.',
    questions: [
      agree('I am paid fairly for the work I do.'),
      agree('I understand how my pay is decided.'),
      agree('Our benefits meet my needs.'),
      multiple(
        'Which benefits matter most to you?',
        ['Health insurance', 'Pension', 'Flexible hours', 'Extra leave', 'Learning budget'],
        2,
      ),
      open('Which change to pay or benefits would matter most to you?'),
    ],
  },
  {
    key: 'remote',
    cues: ['remote', 'hybrid', 'distributed', 'home', 'office', 'wfh', 'flexible', 'flexibility'],
    title: 'Remote and hybrid work survey',
    description: 'Tell us how working remotely or in a hybrid setting works for you.',
    questions: [
      agree('I have a good set-up for working remotely.'),
      agree('I feel connected to my team when working remotely.'),
      single('How many days a week would you like to work in the office?', ['0', '1', '2', '3', '4 or more']),
      agree('Remote and office colleagues have equal opportunities here.'),
      open('What would make remote collaboration easier?'),
    ],
  },
];

/** When no topic is recognised: a general engagement survey. */
export const DEFAULT_TOPIC = 'engagement';

/** The model name the offline generator reports. */
export const OFFLINE_GENERATION_MODEL = 'offline-question-bank@1';
