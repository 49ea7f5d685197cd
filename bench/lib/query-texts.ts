/**
 * The query texts the search latency benches send: everyday searches, and natural-language ones
 * composed from phrase lists so that each is new (an embedding, a query never cached).
 */

/** Everyday post searches, asked in turn (latency.ts; proxy-floor.ts asks the first five). */
export const SEARCH_QUERIES = [
  'night-time skincare routine with a discount code',
  'budget meal prep for the week',
  'strength training for beginners',
  'how to save money on groceries',
  'travel packing tips carry on',
  'cozy knitting patterns',
  'retinol guide for sensitive skin',
  'home workout without equipment',
  'sourdough bread starter',
  'dog training tips for puppies',
  'film photography beginner',
  'personal finance index funds',
  'gaming setup tour',
  'toddler sleep routine',
  'beat making tutorial',
];

const WHO = ['creators', 'a creator', 'beginners', 'people', 'someone', 'a coach', 'a mom', 'students'];
const WHAT = [
  'showing a night-time skincare routine',
  'doing budget meal prep for the week',
  'explaining index funds simply',
  'training a puppy to sit',
  'packing a carry-on for two weeks',
  'building a gaming setup on a budget',
  'baking sourdough at home',
  'doing a home workout without equipment',
  'reviewing drugstore makeup',
  'planning a toddler sleep schedule',
];
const HOW = [
  'with a discount code',
  'in under a minute',
  'for small apartments',
  'with honest results',
  'as a beginner',
  'before and after',
  'step by step',
  'on a tight budget',
];

/** Query text `i`: who, what and how from the lists above, and `i` itself, so none repeats. */
export const distinctQueryText = (i: number) =>
  `${WHO[i % WHO.length]} ${WHAT[Math.floor(i / WHO.length) % WHAT.length]} ${HOW[Math.floor(i / (WHO.length * WHAT.length)) % HOW.length]} ${i}`;
